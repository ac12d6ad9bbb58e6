// The OpenAPI document covers the whole route table: every /api/v1 route with its method, a success
// schema, error responses, request-body schemas, and its security requirement (bearerAuth on admin
// routes, none on public ones). It is a valid OpenAPI 3.1 document for an independent validator
// (@apidevtools/swagger-parser; .ci/run also lints it with @redocly/cli). The browsable UI is
// served by Keyward itself and points at the document (test/browser/docs.test.ts opens it in Chromium).
import { afterAll, describe, expect, test } from "bun:test";
import SwaggerParser from "@apidevtools/swagger-parser";
import { createTestApp } from "../support/app";
import { openApiPath } from "../../src/http/openapi";
import { DOCS_CSP } from "../../src/http/docs-ui";

const t = await createTestApp();
afterAll(() => t.close());

const SPEC = "/api/v1/openapi.json";
const UI = "/api/v1/docs";
const DOWNLOAD_REDIRECT = "/api/v1/releases/:slug/download/:artifact_id";

interface MediaType {
  schema?: Record<string, unknown>;
}
interface Operation {
  operationId?: string;
  security?: Record<string, string[]>[];
  requestBody?: { content?: Record<string, MediaType> };
  responses?: Record<string, { description?: string; content?: Record<string, MediaType>; headers?: Record<string, unknown> }>;
  parameters?: { name: string; in: string }[];
  tags?: string[];
  summary?: string;
}
interface Doc {
  openapi: string;
  info: { title: string; version: string };
  servers?: { url: string; description?: string }[];
  paths: Record<string, Record<string, Operation>>;
  components?: { securitySchemes?: Record<string, { type: string; scheme?: string; in?: string; name?: string }> };
}

const res = await t.request("GET", SPEC);
const doc = res.body as Doc;
const routes = (await t.app.routes()).filter((r) => r.path.startsWith("/api/v1/") && r.path !== SPEC && r.path !== UI && !r.path.startsWith(`${UI}/`));
const op = (method: string, path: string): Operation | undefined => doc.paths[openApiPath(path)]?.[method.toLowerCase()];

describe("GET /api/v1/openapi.json", () => {
  test("is an OpenAPI 3.1 document for this API version", () => {
    expect(res.status).toBe(200);
    expect(doc.openapi).toMatch(/^3\.1\.\d+$/);
    expect(doc.info.title).toBe("Keyward API");
    expect(doc.info.version).toBe("1.1.0");
  });

  test("lists every /api/v1 route of the route table with its method, and nothing else", () => {
    expect(routes.length).toBeGreaterThan(5);
    const missing = routes.filter((r) => !op(r.method, r.path)).map((r) => `${r.method} ${r.path}`);
    expect(missing).toEqual([]);
    const listed = Object.entries(doc.paths).flatMap(([p, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${p}`));
    const known = new Set(routes.map((r) => `${r.method} ${openApiPath(r.path)}`));
    expect(listed.filter((k) => !known.has(k))).toEqual([]);
  });

  test("the documentation routes themselves are not listed", () => {
    expect(doc.paths[SPEC]).toBeUndefined();
    expect(Object.keys(doc.paths).filter((p) => p.startsWith(UI))).toEqual([]);
  });

  test("is valid for @apidevtools/swagger-parser (schema validation and $ref resolution)", async () => {
    // validate() dereferences in place: it gets a deep copy, not the object the other tests read.
    const api = await SwaggerParser.validate(structuredClone(doc) as never);
    expect(Object.keys(api.paths ?? {}).length).toBe(Object.keys(doc.paths).length);
  }, 60_000); // ~1 MB of inlined schemas: seconds of work, more on a loaded machine

  test("has a server, relative to the document's address (the path of BASE_URL)", async () => {
    expect(doc.servers).toEqual([{ url: "/", description: expect.any(String) }]);
    const prefixed = await createTestApp({ env: { BASE_URL: "https://example.test/keyward" } });
    try {
      expect(((await prefixed.request("GET", SPEC)).body as Doc).servers?.map((s) => s.url)).toEqual(["/keyward"]);
    } finally {
      await prefixed.close();
    }
  });

  test("operationIds are unique", () => {
    const ids = Object.values(doc.paths).flatMap((ops) => Object.values(ops).map((o) => o.operationId));
    expect(ids.every((id) => typeof id === "string" && id.length > 0)).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
  });

  test("every response has a description, and a content only as a map of media types", () => {
    const bad: string[] = [];
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const [method, o] of Object.entries(ops)) {
        for (const [status, r] of Object.entries(o.responses ?? {})) {
          if (typeof r.description !== "string" || r.description === "") bad.push(`${method} ${path} ${status}: no description`);
          for (const [type, media] of Object.entries(r.content ?? {})) {
            if (!/^[a-z]+\/[a-z0-9.+-]+$/.test(type) || typeof media !== "object" || media === null) bad.push(`${method} ${path} ${status}: content ${type}`);
          }
        }
      }
    }
    expect(bad).toEqual([]);
  });

  test("no-content responses have no content: upgrade.json 204, the download redirect 302 (with its Location header)", () => {
    const upgrade = op("GET", "/api/v1/releases/:slug/upgrade.json")!.responses!["204"]!;
    expect(upgrade.content).toBeUndefined();
    expect(upgrade.description).toBe("No published release matches");
    const redirect = op("GET", "/api/v1/releases/:slug/download/:artifact_id")!.responses!["302"]!;
    expect(redirect.content).toBeUndefined();
    expect(redirect.headers).toEqual({ Location: { schema: expect.objectContaining({ type: "string", format: "uri" }) } });
  });

  test("every security requirement names a declared scheme", () => {
    const declared = new Set(Object.keys(doc.components?.securitySchemes ?? {}));
    const used = Object.values(doc.paths).flatMap((ops) => Object.values(ops).flatMap((o) => (o.security ?? []).flatMap((r) => Object.keys(r))));
    expect(used.length).toBeGreaterThan(0);
    expect(used.filter((name) => !declared.has(name))).toEqual([]);
  });
});

describe("every operation", () => {
  for (const route of routes) {
    const key = `${route.method} ${route.path}`;
    test(`${key}: tags, summary, a success response with a schema, and error responses`, () => {
      const o = op(route.method, route.path)!;
      expect(o).toBeDefined();
      expect(o.tags?.length ?? 0).toBeGreaterThan(0);
      expect(typeof o.summary).toBe("string");
      const statuses = Object.keys(o.responses ?? {});
      const success = statuses.filter((s) => /^[23]\d\d$/.test(s));
      expect({ key, success: success.length > 0 }).toEqual({ key, success: true });
      for (const s of success.filter((s) => s.startsWith("2") && s !== "204")) {
        const content = o.responses![s]!.content ?? {};
        const schemas = Object.values(content).map((m) => m.schema);
        expect({ key, status: s, hasSchema: schemas.length > 0 && schemas.every((x) => x && Object.keys(x).length > 0) }).toEqual({
          key,
          status: s,
          hasSchema: true,
        });
      }
      // errors() always documents 400 and 500 (the error handler can produce both on any route).
      expect({ key, errors: statuses.filter((s) => s === "400" || s === "500") }).toEqual({ key, errors: ["400", "500"] });
      for (const s of statuses.filter((s) => /^[45]/.test(s))) {
        const schema = o.responses![s]!.content?.["application/json"]?.schema as { properties?: Record<string, unknown> } | undefined;
        expect({ key, status: s, envelope: Object.keys(schema?.properties ?? {}).sort() }).toEqual({ key, status: s, envelope: ["error", "success"] });
      }
    });

    const params = [...route.path.matchAll(/:([A-Za-z0-9_]+)/g)].map((m) => m[1]!);
    if (params.length) {
      test(`${key}: path parameters ${params.join(", ")} are documented`, () => {
        const documented = (op(route.method, route.path)!.parameters ?? []).filter((p) => p.in === "path").map((p) => p.name);
        expect(documented.sort()).toEqual([...params].sort());
      });
    }

    if (route.hooks?.body) {
      test(`${key}: the request body has a JSON schema`, () => {
        const schema = op(route.method, route.path)!.requestBody?.content?.["application/json"]?.schema as { type?: string } | undefined;
        expect({ key, type: schema?.type }).toEqual({ key, type: "object" });
      });
    }

    if (route.path.startsWith("/api/v1/admin/")) {
      test(`${key}: requires bearerAuth or an admin's session cookie and documents 401 and 403`, () => {
        const o = op(route.method, route.path)!;
        expect(o.security).toEqual([{ bearerAuth: [] }, { sessionCookie: [] }]);
        expect(Object.keys(o.responses ?? {})).toEqual(expect.arrayContaining(["401", "403"]));
      });
    } else if (route.path === DOWNLOAD_REDIRECT) {
      test(`${key}: no credential, or Authorization: License <key>; documents 401 and 403`, () => {
        const o = op(route.method, route.path)!;
        expect(o.security).toEqual([{}, { licenseKey: [] }]);
        expect(Object.keys(o.responses ?? {})).toEqual(expect.arrayContaining(["401", "403"]));
      });
    } else if (JSON.stringify((route.hooks as { detail?: { security?: unknown } } | undefined)?.detail?.security) === JSON.stringify([{ sessionCookie: [] }])) {
      // Routes behind the `signedIn` macro (portal, /auth/me…); their 401 is tested with the routes.
      test(`${key}: requires the session cookie and documents 401`, () => {
        const o = op(route.method, route.path)!;
        expect(o.security).toEqual([{ sessionCookie: [] }]);
        expect(Object.keys(o.responses ?? {})).toEqual(expect.arrayContaining(["401"]));
      });
    } else {
      test(`${key}: public, says so with an empty security requirement`, () => {
        expect(op(route.method, route.path)!.security).toEqual([]);
      });
    }
  }

  test("the sessionCookie scheme is declared", () => {
    expect(doc.components?.securitySchemes?.sessionCookie).toMatchObject({ type: "apiKey", in: "cookie", name: "session" });
  });

  test("the bearerAuth scheme is declared", () => {
    expect(doc.components?.securitySchemes?.bearerAuth).toMatchObject({ type: "http", scheme: "bearer" });
  });

  test("the licenseKey scheme is declared: the Authorization header (`License <key>`)", () => {
    expect(doc.components?.securitySchemes?.licenseKey).toMatchObject({ type: "apiKey", in: "header", name: "Authorization" });
  });
});

describe("GET /api/v1/docs", () => {
  test("serves the browsable UI, configured with the document's absolute URL", async () => {
    const ui = await t.request("GET", UI);
    expect(ui.status).toBe(200);
    expect(ui.headers.get("content-type")).toContain("text/html");
    expect(ui.text).toContain("<title>Keyward API</title>");
    const url = /data-url="([^"]*)"/.exec(ui.text);
    expect(url).not.toBeNull();
    // The browser resolves the URL against the page's address; it must land on the document.
    const resolved = new URL(url![1]!, `http://localhost${UI}`).pathname;
    expect(resolved).toBe(SPEC);
    expect((await t.request("GET", resolved)).status).toBe(200);
  });

  test("loads nothing from another origin: every script and stylesheet is served here, under a self-only CSP", async () => {
    const ui = await t.request("GET", UI);
    expect(ui.headers.get("content-security-policy")).toBe(DOCS_CSP);
    expect(DOCS_CSP).toContain("default-src 'none'");
    expect(DOCS_CSP).toContain("script-src 'self'");
    expect(DOCS_CSP).toContain("connect-src 'self'");
    expect(DOCS_CSP).not.toMatch(/https?:|\*/);
    const refs = [...ui.text.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!).filter((ref) => !ref.startsWith("data:"));
    expect(refs.length).toBe(3);
    for (const ref of refs) {
      const u = new URL(ref, `http://localhost${UI}`);
      expect(u.origin).toBe("http://localhost");
      const asset = await t.request("GET", u.pathname);
      expect({ ref, status: asset.status }).toEqual({ ref, status: 200 });
      expect(asset.headers.get("content-type")).toMatch(ref.endsWith(".css") ? /^text\/css/ : /^text\/javascript/);
    }
    // The viewer is the pinned npm package, byte for byte.
    const bundle = await t.request("GET", `${UI}/assets/swagger-ui-bundle.js`);
    expect(bundle.text).toBe(await Bun.file(require.resolve("swagger-ui-dist/swagger-ui-bundle.js")).text());
    expect(bundle.text).toContain("SwaggerUIBundle");
  });
});
