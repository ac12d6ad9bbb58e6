// Public routes of the local storage driver: the targets of its presigned URLs. Authorization is
// the URL's HMAC signature and expiry (no API key), like an S3 presigned URL. Mounted only when
// STORAGE_DRIVER=local. The upload body bypasses the JSON parser (http/body.ts rawBodyPrefixes).
import { Elysia } from "elysia";
import { t } from "../../http/schema";
import type { Deps } from "../../deps";
import { Envelope, errors, ok } from "../../http/envelope";
import { contentDisposition } from "./disposition";
import { isLocalStorage, LOCAL_OBJECTS_PATH } from "./local";
import { openDownload, receiveUpload, type Download } from "./service";

const API_PREFIX_LENGTH = "/api/v1".length;
/** Route path relative to the /api/v1 group. */
const OBJECTS = `${LOCAL_OBJECTS_PATH.slice(API_PREFIX_LENGTH)}/*`;

// The wildcard holds the object key, still percent-encoded (Elysia does not decode `*`); the service
// decodes it. A Record schema because t.Object({"*": …}) trips Elysia 1.4's exactMirror generator.
const Params = t.Record(t.String(), t.String(), { description: "`*`: the object key" });
// Presigned URLs are checked by their signature, not by the shape of their query: a URL signed for
// another method, key or parameters fails the HMAC and gets the same 403 as any tampered URL, so
// parameters this method does not sign are tolerated here rather than answered with a 400.
const PutQuery = t.Object(
  { expires: t.Optional(t.String()), size: t.Optional(t.String()), sig: t.Optional(t.String()) },
  { additionalProperties: true },
);
const GetQuery = t.Object(
  {
    expires: t.Optional(t.String()),
    filename: t.Optional(t.String()),
    type: t.Optional(t.String()),
    sig: t.Optional(t.String()),
  },
  { additionalProperties: true },
);
const detail = (summary: string) => ({ tags: ["Storage (local driver)"], summary });

// A download is the object's bytes, not an envelope: clients and updaters save the body as the file.
// Bun.serve streams a Bun.file body from disk and answers a single `Range` itself (206 / 416), so
// resumed downloads work without buffering.
function downloadResponse(d: Download): Response {
  const headers: Record<string, string> = {
    "content-type": d.contentType,
    "content-length": String(d.size),
    "accept-ranges": "bytes",
    "cache-control": "private, no-store",
  };
  if (d.filename) headers["content-disposition"] = contentDisposition(d.filename);
  return new Response(d.body, { status: 200, headers });
}

export function storageRoutes(deps: Deps) {
  const app = new Elysia({ name: "keyward/storage" });
  if (!isLocalStorage(deps.storage)) return app;
  return app
    .put(
      OBJECTS,
      async ({ params, query, request }) =>
        ok(
          await receiveUpload(deps, {
            rawKey: params["*"] ?? "",
            query,
            contentType: request.headers.get("content-type"),
            body: request.body,
          }),
        ),
      {
        params: Params,
        query: PutQuery,
        response: { 200: Envelope(t.Object({ size: t.Integer() })), ...errors(403, 404, 409, 413) },
        detail: detail(
          "Upload an object to a presigned local-storage URL (raw body, streamed to disk); 409 once the artifact is finalized, 404 once it is replaced or deleted",
        ),
      },
    )
    .get(
      OBJECTS,
      async ({ params, query }) =>
        downloadResponse(await openDownload(deps, { rawKey: params["*"] ?? "", query })),
      {
        params: Params,
        query: GetQuery,
        response: { 200: t.Any({ description: "The object bytes (a single Range gives 206)" }), ...errors(403, 404) },
        detail: detail("Download an object from a presigned local-storage URL (supports a single Range)"),
      },
    );
}
