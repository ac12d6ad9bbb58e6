// OpenAPI 3.1 document through @elysiajs/openapi, with corrections of what the plugin generates:
// 1. Request bodies. The plugin derives a body's media types from the route's parsers and skips
//    function parsers, so with our global JSON parser (http/body.ts) every requestBody came out with
//    `content: {}` — no schema at all. Every parsed body is JSON, so the body schema is filled in
//    under application/json.
// 2. Paths with a dot (feed.xml, upgrade.json) were dropped as "static files".
// 3. Responses without a body (the feeds' 204, the download redirect's 302, declared with t.Void)
//    came out as `content: {type: "void", description}`, which is not a map of media types: the
//    document was invalid. They are described without a `content`.
// 4. Security. The admin guard's macro declares bearerAuth on every admin route, and a route may
//    declare its own requirement in `detail.security` (the download redirect: optional
//    `Authorization: License <key>`); every other operation is public and says so with
//    `security: []`, so no reader has to guess.
// The browsable page is not the plugin's (it loads its viewer from a CDN): see http/docs-ui.ts.
import { Elysia } from "elysia";
import { openapi, type ElysiaOpenAPIConfig } from "@elysiajs/openapi";
import { docsUi } from "./docs-ui";

interface Response {
  content?: Record<string, unknown>;
}
interface Operation {
  requestBody?: { content?: Record<string, unknown> };
  responses?: Record<string, Response>;
  security?: unknown[];
}
type Document = { paths?: Record<string, Record<string, Operation>> };

interface RouteLike {
  method: string;
  path: string;
  hooks?: { body?: unknown };
}

/** Elysia `/a/:id` → OpenAPI `/a/{id}` */
export const openApiPath = (path: string) => path.replace(/:([A-Za-z0-9_]+)/g, "{$1}");

function fillJsonBodies(doc: Document, routes: readonly RouteLike[]): void {
  for (const route of routes) {
    const schema = route.hooks?.body;
    if (!schema || typeof schema !== "object") continue;
    const body = doc.paths?.[openApiPath(route.path)]?.[route.method.toLowerCase()]?.requestBody;
    if (body && Object.keys(body.content ?? {}).length === 0) body.content = { "application/json": { schema } };
  }
}

/** A media-type map has only objects as values; the plugin's void marker has strings. */
const isMediaTypeMap = (content: Record<string, unknown>) =>
  Object.values(content).every((v) => v !== null && typeof v === "object" && !Array.isArray(v));

function fixOperations(doc: Document): void {
  for (const operations of Object.values(doc.paths ?? {})) {
    for (const operation of Object.values(operations)) {
      for (const response of Object.values(operation.responses ?? {})) {
        if (response.content && !isMediaTypeMap(response.content)) delete response.content;
      }
      operation.security ??= [];
    }
  }
}

export function apiDocs(opts: { uiPath: string; specPath: string; documentation: NonNullable<ElysiaOpenAPIConfig["documentation"]> }) {
  const plugin = new Elysia({ name: "keyward/openapi" });
  return (
    plugin
      // Local hook: runs for the documentation routes below only. The plugin caches the document
      // object, so the fix-up is applied to the same object each time (idempotent).
      .onAfterHandle(({ responseValue }) => {
        if (responseValue && typeof responseValue === "object" && "paths" in responseValue) {
          // getGlobalRoutes is protected in the types; the openapi plugin reads the route table the same way.
          fillJsonBodies(responseValue as Document, (plugin as unknown as { getGlobalRoutes(): RouteLike[] }).getGlobalRoutes());
          fixOperations(responseValue as Document);
        }
      })
      .use(
        openapi({
          specPath: opts.specPath,
          documentation: opts.documentation,
          // No page from the plugin: its viewer comes from a CDN. Ours is served by docsUi below.
          provider: null,
          // The plugin drops paths containing a dot as "static files" by default; feed.xml,
          // feed.json and upgrade.json are API routes (spec: Update feeds).
          exclude: { staticFile: false },
        }),
      )
      .use(docsUi({ uiPath: opts.uiPath, specPath: opts.specPath, title: opts.documentation.info?.title ?? "API" }))
  );
}
