// Public update feeds (spec "Update feeds"). No credential: feeds trust the per-product artifact
// signatures. Successful answers are raw Responses, not enveloped: an appcast, a JSON array and
// Tauri's manifest are documents whose formats their clients define (spec design rule 3). Errors
// (400/404) still leave through the error handler in the envelope.
import { Elysia } from "elysia";
import { t } from "../../http/schema";
import type { Deps } from "../../deps";
import { errors } from "../../http/envelope";
import { latestUpdate, renderedFeed } from "./service";
import { createFeedCache } from "./cache";
import { KEYWARD_NS, renderAppcast, renderFeedJson, tauriResponse } from "./present";
import { canonicalPlatform } from "./domain";
import { FeedJsonEntry, FeedQuery, SlugParams, TauriManifest, UpgradeQuery } from "./model";
import type { Channel, Platform } from "../releases/repo";

const detail = (summary: string) => ({ tags: ["Update feeds"], summary });

// Revalidate on every use: a yank must withdraw a release at once (spec "Release"), so no cache may
// keep serving it. Download URLs inside are stable, so caching the bytes would be safe otherwise.
const CACHE = "no-cache";

type FeedQueryIn = { platform: Platform; channel?: Channel; limit?: number; license_key?: string };

/** The appcast and the JSON feed answer the same query (defaults from the spec: stable, limit 20). */
function feedInput(slug: string, query: FeedQueryIn, format: "feed.xml" | "feed.json") {
  return { slug, platform: query.platform, channel: query.channel ?? "stable", limit: query.limit ?? 20, licenseKey: query.license_key, format };
}

export function feedRoutes(deps: Deps) {
  const cache = createFeedCache();
  return new Elysia({ name: "keyward/feeds" })
    .get(
      "/releases/:slug/feed.xml",
      async ({ params, query }) => {
        const body = await renderedFeed(deps, cache, feedInput(params.slug, query, "feed.xml"), renderAppcast);
        return new Response(body, {
          headers: { "content-type": "application/rss+xml; charset=utf-8", "cache-control": CACHE },
        });
      },
      {
        params: SlugParams,
        query: FeedQuery,
        response: {
          200: t.String({
            description: `Sparkle/WinSparkle appcast (RSS 2.0). The product's floor is on <channel> as keyward:minimumSupportedVersion and keyward:minimumSupportedMessage, namespace ${KEYWARD_NS}`,
          }),
          ...errors(404),
        },
        detail: detail("Sparkle / WinSparkle appcast for one platform and channel"),
      },
    )
    .get(
      "/releases/:slug/feed.json",
      async ({ params, query }) => {
        const body = await renderedFeed(deps, cache, feedInput(params.slug, query, "feed.json"), (view) => JSON.stringify(renderFeedJson(view)));
        return new Response(body, { headers: { "content-type": "application/json;charset=utf-8", "cache-control": CACHE } });
      },
      {
        params: SlugParams,
        query: FeedQuery,
        response: { 200: t.Array(FeedJsonEntry), ...errors(404) },
        detail: detail("JSON feed: published releases for one platform, newest first"),
      },
    )
    .get(
      "/releases/:slug/upgrade.json",
      async ({ params, query }) => {
        const found = await latestUpdate(
          deps,
          {
            slug: params.slug,
            platform: canonicalPlatform(query.platform),
            channel: query.channel ?? "stable",
            licenseKey: query.license_key,
          },
          query.current_version,
        );
        return tauriResponse(found, { "cache-control": CACHE });
      },
      {
        params: SlugParams,
        query: UpgradeQuery,
        response: { 200: TauriManifest, 204: t.Void({ description: "No published release matches" }), ...errors(404) },
        detail: detail("Tauri updater manifest (dynamic server format): the newest release, or 204"),
      },
    );
}
