// The OpenAPI document covers the whole route table: every /api/v1 route with its method, a success
// schema, error responses, request-body schemas, and bearerAuth on admin routes. The browsable UI
// is served and points at the document.
import { afterAll, describe, expect, test } from "bun:test";
import { createTestApp } from "../support/app";
import { openApiPath } from "../../src/http/openapi";

const t = createTestApp();
afterAll(() => t.close());

const SPEC = "/api/v1/openapi.json";
const UI = "/api/v1/docs";

interface MediaType {
  schema?: Record<string, unknown>;
}
interface Operation {
  security?: Record<string, string[]>[];
  requestBody?: { content?: Record<string, MediaType> };
  responses?: Record<string, { content?: Record<string, MediaType> }>;
  parameters?: { name: string; in: string }[];
  tags?: string[];
  summary?: string;
}
interface Doc {
  openapi: string;
  info: { title: string; version: string };
  paths: Record<string, Record<string, Operation>>;
  components?: { securitySchemes?: Record<string, { type: string; scheme?: string }> };
}

const res = await t.request("GET", SPEC);
const doc = res.body as Doc;
const routes = t.app.routes.filter((r) => r.path.startsWith("/api/v1/") && r.path !== SPEC && r.path !== UI);
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
    expect(doc.paths[UI]).toBeUndefined();
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
      test(`${key}: requires bearerAuth and documents 401 and 403`, () => {
        const o = op(route.method, route.path)!;
        expect(o.security).toEqual([{ bearerAuth: [] }]);
        expect(Object.keys(o.responses ?? {})).toEqual(expect.arrayContaining(["401", "403"]));
      });
    } else {
      test(`${key}: public, no security requirement`, () => {
        expect(op(route.method, route.path)!.security).toBeUndefined();
      });
    }
  }

  test("the bearerAuth scheme is declared", () => {
    expect(doc.components?.securitySchemes?.bearerAuth).toMatchObject({ type: "http", scheme: "bearer" });
  });
});

describe("GET /api/v1/docs", () => {
  test("serves the browsable UI, configured with the document's absolute URL", async () => {
    const ui = await t.request("GET", UI);
    expect(ui.status).toBe(200);
    expect(ui.headers.get("content-type")).toContain("text/html");
    expect(ui.text).toContain("<title>Keyward API</title>");
    const config = /data-configuration='([^']*)'/.exec(ui.text);
    expect(config).not.toBeNull();
    const { url } = JSON.parse(config![1]!) as { url: string };
    // The browser resolves the URL against the page's address; it must land on the document.
    const resolved = new URL(url, `http://localhost${UI}`).pathname;
    expect(resolved).toBe(SPEC);
    expect((await t.request("GET", resolved)).status).toBe(200);
  });
});
