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
//
// Built on the first request for it, not at start: the plugin (about 170 KB of JavaScript with the
// Zod and Valibot copies it bundles) is imported then, and the document (every route's schemas,
// every event's webhook body) is built once and kept. The route below does what the plugin's own
// spec route does (toOpenAPISchema over the app's routes, the `documentation` merged over it), so
// the document is the same; the plugin's `openapi()` itself is never mounted. Each area of the app
// (src/app.ts) is an app of its own: the document is built over every area's routes.
import { Elysia, type AnyElysia } from "elysia";
import type { ElysiaOpenAPIConfig } from "@elysiajs/openapi";
import { docsUi } from "./docs-ui";
import { registerFormats } from "./formats";

/** The plugin's default, which it wrote into the document when mounted. */
const OPENAPI_VERSION = "3.1.2";

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

type Documentation = NonNullable<ElysiaOpenAPIConfig["documentation"]>;

/**
 * What the plugin's spec route answered (its toFullSchema), with the fix-ups above applied, over the
 * routes of every area's app (each area is an app of its own: src/app.ts).
 */
async function buildDocument(apps: readonly AnyElysia[], documentation: Documentation): Promise<Document> {
  const { toOpenAPISchema } = await import("@elysiajs/openapi");
  // The import replaced format checks (uuid, email) with the plugin's: put ours back.
  registerFormats();
  const paths: Record<string, unknown> = {};
  const schemas: Record<string, unknown> = {};
  const routes: RouteLike[] = [];
  for (const app of apps) {
    // getGlobalRoutes is protected in the types; the plugin reads the route table the same way.
    routes.push(...(app as unknown as { getGlobalRoutes(): RouteLike[] }).getGlobalRoutes());
    // The plugin drops paths containing a dot as "static files" by default; feed.xml, feed.json and
    // upgrade.json are API routes (spec: Update feeds).
    const part = toOpenAPISchema(app, { staticFile: false }, undefined, undefined, OPENAPI_VERSION);
    Object.assign(paths, part.paths);
    Object.assign(schemas, part.components.schemas);
  }
  const doc = {
    ...documentation,
    openapi: OPENAPI_VERSION,
    tags: documentation.tags,
    info: { title: "Elysia Documentation", description: "Development documentation", version: "0.0.0", ...documentation.info },
    paths: { ...paths, ...documentation.paths },
    components: { ...documentation.components, schemas: { ...schemas, ...documentation.components?.schemas } },
  };
  fillJsonBodies(doc as Document, routes);
  fixOperations(doc as Document);
  return doc as Document;
}

export interface ApiDocsOptions {
  uiPath: string;
  specPath: string;
  /** The browsable page's title. */
  title: string;
  /** The document's own parts (info, servers, webhooks…), asked for when the document is first built. */
  documentation: () => Documentation;
  /** The apps whose routes the document describes, asked for when it is first built. */
  apps: () => Promise<readonly AnyElysia[]>;
}

export function apiDocs(opts: ApiDocsOptions) {
  const plugin = new Elysia({ name: "keyward/openapi" });
  let document: Promise<Document> | null = null;
  return plugin
    .get(
      opts.specPath,
      () =>
        (document ??= opts.apps().then((apps) => buildDocument(apps, opts.documentation())).catch((e: unknown) => {
          document = null; // not kept: the next request tries again
          throw e;
        })),
      { detail: { hide: true } },
    )
    .use(docsUi({ uiPath: opts.uiPath, specPath: opts.specPath, title: opts.title }));
}
