// Query validation errors name the query field (issue 8). Walks every route in the app's route table
// that has a query schema and sends, one field at a time, values the schema must refuse: for an
// integer `0`, `abc`, `1e1` and one past each end of its range; for an enum a value outside it; for a
// bounded string one past its length. Each gets 400 VALIDATION_ERROR with `details.fields[field]`.
// Before the fix a range failure answered `fields: {property: …}` and "1e1" was taken as 10.
import { afterAll, describe, expect, test } from "bun:test";
import { createTestApp } from "../support/app";
import { makeCatalog, makeProduct } from "../support/factories";

const t = await createTestApp();
afterAll(() => t.close());

type Schema = Record<string | symbol, any>;
const KIND = Symbol.for("TypeBox.Kind");

interface QueryRoute {
  method: string;
  path: string;
  query: Schema;
}

const routes: QueryRoute[] = ((await t.app.routes()) as { method: string; path: string; hooks?: any }[])
  .filter((r) => r.hooks?.query?.properties)
  .map((r) => ({ method: r.method, path: r.path, query: r.hooks.query as Schema }));

// Any integer schema: a JSON-schema integer, or a union with an integer branch (Elysia's own t.Integer).
const isInteger = (s: Schema): boolean => s.type === "integer" || (Array.isArray(s.anyOf) && s.anyOf.some(isInteger));
const enumValues = (s: Schema): string[] | null =>
  Array.isArray(s.anyOf) && s.anyOf.every((x: Schema) => "const" in x) ? s.anyOf.map((x: Schema) => String(x.const)) : null;

/** A value the field's schema accepts (for the fields not under test). */
function goodValue(s: Schema): string {
  if (isInteger(s)) return String(s.minimum ?? 1);
  const e = enumValues(s);
  if (e) return e[0]!;
  if (s.format === "uuid") return "00000000-0000-4000-8000-000000000000";
  if (s.format === "date-time") return "2026-01-01T00:00:00Z";
  return "x".repeat(Math.max(1, s.minLength ?? 1));
}

/** Values the field's schema must refuse. */
function badValues(s: Schema): string[] {
  if (isInteger(s)) {
    const out = ["abc", "1e1", "1.5", "0x10", " 7", ""];
    out.push(String((s.minimum ?? 1) - 1));
    if (typeof s.maximum === "number") out.push(String(s.maximum + 1));
    if (s.minimum === undefined) out.splice(out.indexOf("0"), 1);
    return out;
  }
  const e = enumValues(s);
  if (e) return ["not-a-member"];
  const out: string[] = [];
  if (typeof s.maxLength === "number") out.push("x".repeat(s.maxLength + 1));
  if (s.format === "uuid") out.push("not-a-uuid");
  // RFC 3339 with a zone only (Elysia's own date-time format takes local-time and JS Date strings,
  // and any text containing a timestamp), and only instants both engines store: before the fix the
  // last four answered 500 on PostgreSQL and filtered by a wrong or NaN time on SQLite.
  if (s.format === "date-time") {
    out.push("yesterday", "01/02/2026", "2026-01-01 00:00", "2026-01-01T00:00:00", "Thu Jan 01 2026 00:00:00 GMT+0000 (UTC)", "x2026-01-01T00:00:00Zx");
    out.push('"2026-01-01T00:00:00Z"', "0000-01-01T00:00:00Z", "9999-12-31T23:59:59-14:00", "+275760-09-13T00:00:00Z");
  }
  return out;
}

/** Portal routes answer a signed-in user (a cookie session); the rest take the admin key. */
let portalCookie: string | null = null;
const auth = async (path: string) => (path.includes("/portal/") ? { cookie: (portalCookie ??= await t.signIn("query-validation@example.com")) } : {});

const concretePath = (path: string) => path.replace(/:slug/g, "x").replace(/:[a-z_]+/g, "00000000-0000-4000-8000-000000000000").replace(/\*$/, "a");

test("the route table has query schemas, including the feed and list limits", () => {
  const keys = routes.map((r) => `${r.method} ${r.path}`);
  expect(keys).toContain("GET /api/v1/releases/:slug/feed.xml");
  expect(keys).toContain("GET /api/v1/admin/licenses");
  expect(routes.filter((r) => Object.values(r.query.properties as Record<string, Schema>).some(isInteger)).length).toBeGreaterThanOrEqual(4);
});

for (const route of routes) {
  const props = route.query.properties as Record<string, Schema>;
  const required = new Set<string>(route.query.required ?? []);
  describe(`${route.method} ${route.path}`, () => {
    for (const [field, schema] of Object.entries(props)) {
      for (const bad of badValues(schema)) {
        test(`${field}=${JSON.stringify(bad.length > 20 ? `${bad.slice(0, 8)}…(${bad.length})` : bad)} → 400 naming "${field}"`, async () => {
          const params = new URLSearchParams();
          for (const name of required) if (name !== field) params.set(name, goodValue(props[name]!));
          params.set(field, bad);
          const res = await t.request(route.method, `${concretePath(route.path)}?${params}`, { body: route.method === "GET" ? undefined : "", raw: true, ...(await auth(route.path)) });
          const got = { status: res.status, code: res.body?.error?.code, fields: Object.keys(res.body?.error?.details?.fields ?? {}) };
          expect(got).toEqual({ status: 400, code: "VALIDATION_ERROR", fields: [field] });
        }, 30_000);
      }
    }
  });
}

// Cursors are opaque, but a client can still craft one: each must be refused unless it is one Keyward
// could have issued. Before the fix a time past year 9999 (or before year 1) or U+0000 in the id
// answered 500 on PostgreSQL and read a meaningless page on SQLite.
const b64 = (text: string) => Buffer.from(text, "utf8").toString("base64url");
const CRAFTED_CURSORS = [
  b64(JSON.stringify({ t: 1e300, id: "01900000-0000-7000-8000-000000000000" })),
  b64(JSON.stringify({ t: 1e15, id: "01900000-0000-7000-8000-000000000000" })),
  b64(JSON.stringify({ t: -1e15, id: "01900000-0000-7000-8000-000000000000" })),
  b64(JSON.stringify({ t: 1.5, id: "01900000-0000-7000-8000-000000000000" })),
  b64(JSON.stringify({ t: 1, id: "a\u0000b" })),
  b64(JSON.stringify({ t: 1, id: "\ud800" })),
  b64(`${"0".repeat(16)}.${"0".repeat(16)}.${"0".repeat(15)}1~\u0000`),
  b64(`${"0".repeat(16)}.${"0".repeat(16)}.${"0".repeat(15)}1-1beta\u0000`),
];
/** A real parent for routes listing under one (a made-up id would be a 404 before the cursor is read). */
async function parentPath(path: string): Promise<string> {
  if (path.includes("/products/:id/")) return path.replace(":id", (await makeProduct(t.deps)).id);
  if (path.includes("/webhooks/:id/")) {
    const created = await t.request("POST", "/api/v1/admin/webhooks", { body: { url: "https://93.184.216.34/keyward", events: ["*"] } });
    expect(created.status).toBe(201);
    return path.replace(":id", created.body.data.id);
  }
  return concretePath(path);
}

for (const route of routes.filter((r) => "cursor" in (r.query.properties as Record<string, Schema>))) {
  test(`${route.method} ${route.path}: crafted cursors → 400 naming "cursor"`, async () => {
    const props = route.query.properties as Record<string, Schema>;
    const path = await parentPath(route.path);
    for (const cursor of CRAFTED_CURSORS) {
      const params = new URLSearchParams();
      for (const name of route.query.required ?? []) params.set(name, goodValue(props[name]!));
      params.set("cursor", cursor);
      const res = await t.request(route.method, `${path}?${params}`, await auth(route.path));
      const got = { cursor: Buffer.from(cursor, "base64url").toString("utf8"), status: res.status, fields: Object.keys(res.body?.error?.details?.fields ?? {}) };
      expect(got).toEqual({ ...got, status: 400, fields: ["cursor"] });
    }
  });
}

test("instant filters take RFC 3339 with any offset, from the first to the last storable instant", async () => {
  await makeCatalog(t.deps); // an audit row and an event to find
  for (const path of ["/api/v1/admin/audit", "/api/v1/admin/events"]) {
    const ends = await t.request("GET", `${path}?since=0001-01-01T00:00:00Z&until=9999-12-31T23:59:59.999Z`);
    expect({ path, status: ends.status }).toEqual({ path, status: 200 });
    expect(ends.body.data.items.length).toBeGreaterThan(0);
    const offset = await t.request("GET", `${path}?since=${encodeURIComponent("2026-11-21T10:00:00+02:00")}&until=${encodeURIComponent("2026-11-21T08:00:00.001-00:00")}`);
    expect({ path, status: offset.status }).toEqual({ path, status: 200 });
  }
});

test("feed limit: a valid value still works and the refusal says the range (spec: integer 1-100)", async () => {
  const res = await t.request("GET", "/api/v1/releases/x/feed.xml?platform=linux-x64&limit=101");
  expect(res.body.error.details.fields).toEqual({ limit: "must be an integer from 1 to 100" });
  const list = await t.request("GET", "/api/v1/admin/licenses?limit=200");
  expect(list.status).toBe(200);
  const audit = await t.request("GET", "/api/v1/admin/audit?limit=007");
  expect(audit.status).toBe(400);
});
