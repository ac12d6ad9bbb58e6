// Public feed resolution: product by slug, then published releases with a finalized artifact for the
// platform, newest first by semver over the channel's fallback chain. Drafts, half-uploaded and
// yanked releases never match the query (releases repo `feed`).
import type { Deps } from "../../deps";
import { AppError } from "../../shared/errors";
import { compareVersions } from "../../shared/semver";
import type { Product } from "../products/repo";
import type { Channel, FeedEntry, Platform } from "../releases/repo";
import { CHANNEL_FALLBACK } from "../releases/domain";
import { artifactDownloadUrl } from "../downloads/domain";
import type { FeedView } from "./present";
import type { FeedCache } from "./cache";

export interface FeedInput {
  slug: string;
  platform: Platform;
  channel: Channel;
  limit: number;
  /** Carried into download URLs of `licensed` products only. */
  licenseKey?: string;
  format: "feed.xml" | "feed.json" | "upgrade.json";
}

export async function productBySlug(deps: Deps, slug: string): Promise<Product> {
  const product = await deps.repos.products.findBySlug(slug);
  if (!product) throw new AppError("NOT_FOUND", { message: "Unknown product." });
  return product;
}

export async function buildFeed(deps: Deps, input: FeedInput): Promise<FeedView> {
  return await feedOf(deps, await productBySlug(deps, input.slug), input);
}

/**
 * A rendered feed document, from the cache while the product's published releases and the product
 * itself are unchanged (see cache.ts). Feeds that embed a license key in their download URLs
 * (licensed products) are per customer and never cached.
 */
export async function renderedFeed(deps: Deps, cache: FeedCache, input: FeedInput, render: (view: FeedView) => string): Promise<string> {
  const product = await productBySlug(deps, input.slug);
  const perCustomer = product.distribution === "licensed" && input.licenseKey !== undefined;
  const key = perCustomer
    ? null
    : [product.id, product.releaseGeneration, input.format, input.platform, input.channel, input.limit].join("|");
  const hit = key === null ? undefined : cache.get(key);
  if (hit !== undefined) return hit;
  const body = render(await feedOf(deps, product, input));
  if (key !== null) cache.set(key, body);
  return body;
}

async function feedOf(deps: Deps, product: Product, input: FeedInput): Promise<FeedView> {
  const entries = await deps.repos.releases.feed({
    productId: product.id,
    channels: CHANNEL_FALLBACK[input.channel],
    platform: input.platform,
    limit: input.limit,
    publishedBefore: null,
  });
  const feedUrl = new URL(`${deps.config.baseUrl}/api/v1/releases/${encodeURIComponent(product.slug)}/${input.format}`);
  feedUrl.searchParams.set("platform", input.platform);
  if (input.channel !== "stable") feedUrl.searchParams.set("channel", input.channel);
  const key = product.distribution === "licensed" ? input.licenseKey : undefined;
  return {
    product,
    platform: input.platform,
    entries,
    feedUrl: feedUrl.toString(),
    downloadUrl: (e: FeedEntry) => artifactDownloadUrl(deps.config.baseUrl, product.slug, e.artifact.id, key),
  };
}

/**
 * upgrade.json: the single newest entry, or null (→ 204, Tauri's "no update", §2.3). With
 * `currentVersion` (Tauri's {{current_version}}), an entry that is not newer is no update either.
 */
export async function latestUpdate(deps: Deps, input: Omit<FeedInput, "limit" | "format">, currentVersion?: string): Promise<{ view: FeedView; entry: FeedEntry } | null> {
  const view = await buildFeed(deps, { ...input, limit: 1, format: "upgrade.json" });
  const entry = view.entries[0];
  if (!entry) return null;
  if (currentVersion !== undefined && compareVersions(entry.release.version, currentVersion) <= 0) return null;
  return { view, entry };
}
