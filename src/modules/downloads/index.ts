import { Elysia } from "elysia";
import { t, withHeaders } from "../../http/schema";
import type { Deps } from "../../deps";
import { Envelope, errors, ok } from "../../http/envelope";
import { artifactRedirect, licenseDownload } from "./service";
import { licenseKeyFrom } from "./domain";
import { DownloadBody, DownloadResult, RedirectParams, RedirectQuery } from "./model";
import { presentDownload, redirectToStorage } from "./present";

export function downloadRoutes(deps: Deps) {
  return new Elysia({ name: "keyward/downloads" })
    .post(
      "/license/download",
      async ({ body }) => {
        const download = await licenseDownload(deps, {
          licenseKey: body.license_key,
          platform: body.platform,
          version: body.version,
          channel: body.channel ?? "stable",
        });
        return ok(presentDownload(download));
      },
      {
        body: DownloadBody,
        response: { 200: Envelope(DownloadResult), ...errors(403, 404, 410, 503) },
        detail: { tags: ["License"], summary: "Short-lived download URL for a licensed release (support window applies)" },
      },
    )
    .get(
      "/releases/:slug/download/:artifact_id",
      async ({ params, query, request }) => {
        const presigned = await artifactRedirect(deps, {
          slug: params.slug,
          artifactId: params.artifact_id,
          licenseKey: licenseKeyFrom(request.headers.get("authorization"), query.license_key),
        });
        return redirectToStorage(presigned);
      },
      {
        params: RedirectParams,
        query: RedirectQuery,
        response: {
          302: withHeaders(t.Void({ description: "Redirect to a fresh short-lived storage URL" }), {
            Location: t.String({ format: "uri", description: "The presigned storage URL" }),
          }),
          ...errors(401, 403, 404, 410, 503),
        },
        detail: {
          // Unlicensed products need no credential; licensed ones take the key in this header or
          // in the license_key query parameter (DECISIONS).
          security: [{}, { licenseKey: [] }],
          tags: ["Update feeds"],
          summary: "Stable artifact URL embedded in feeds: 302 to a fresh presigned URL (licensed products need a license key)",
        },
      },
    );
}
