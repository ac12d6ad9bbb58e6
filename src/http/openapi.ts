// OpenAPI 3.1 document and browsable UI through @elysiajs/openapi, with two corrections:
// 1. Request bodies. The plugin derives a body's media types from the route's parsers and skips
//    function parsers, so with our global JSON parser (http/body.ts) every requestBody came out with
//    `content: {}` — no schema at all. Every parsed body is JSON, so the body schema is filled in
//    under application/json.
// 2. Paths with a dot (feed.xml, upgrade.json) were dropped as "static files".
// 3. The UI page fetches the document from a URL relative to the page ("api/v1/openapi.json" from
//    /api/v1/docs → /api/v1/api/v1/openapi.json, a 404); it gets the absolute path instead.
import { Elysia } from "elysia";
import { openapi, type ElysiaOpenAPIConfig } from "@elysiajs/openapi";

type Operation = { requestBody?: { content?: Record<string, unknown> } };
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

export function apiDocs(opts: { uiPath: string; specPath: string; documentation: ElysiaOpenAPIConfig["documentation"] }) {
  const plugin = new Elysia({ name: "keyward/openapi" });
  return (
    plugin
      // Local hook: runs for the two documentation routes below only. The plugin caches the document
      // object, so the fix-up is applied to the same object each time (idempotent).
      .onAfterHandle(({ responseValue }) => {
        if (responseValue && typeof responseValue === "object" && "paths" in responseValue) {
          // getGlobalRoutes is protected in the types; the openapi plugin reads the route table the same way.
          fillJsonBodies(responseValue as Document, (plugin as unknown as { getGlobalRoutes(): RouteLike[] }).getGlobalRoutes());
        }
      })
      .use(
        openapi({
          path: opts.uiPath,
          specPath: opts.specPath,
          documentation: opts.documentation,
          scalar: { url: opts.specPath },
          // The plugin drops paths containing a dot as "static files" by default; feed.xml,
          // feed.json and upgrade.json are API routes (spec: Update feeds).
          exclude: { staticFile: false },
        }),
      )
  );
}
