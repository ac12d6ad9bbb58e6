// A JSON body's integer field accepts only a JSON integer, on every route (issue 8, point 8): Elysia's
// t.Integer decoded strings with unary `+`, so `quantity: "1e1"` consumed 10 units. This walks every
// admin route with a JSON body (schemas from the route table, valid bodies from the route fixtures)
// and sends each integer field as a string holding a valid integer; the public usage route follows.
import { afterAll, describe, expect, test } from "bun:test";
import type { TSchema } from "@sinclair/typebox";
import { createTestApp } from "../support/app";
import { catalog, post, quota } from "../support/license-api";
import { adminRoutes, buildRequest, freshContext, loadRouteFixtures } from "../support/route-fixtures";

const t = await createTestApp();
afterAll(() => t.close());
const fixtures = await loadRouteFixtures();

/** The integer schema inside `s` (itself, a nullable union member, or an array's items), if any. */
function integerIn(s: TSchema | undefined): { schema: TSchema; array: boolean } | null {
  if (!s) return null;
  if (s.type === "integer") return { schema: s, array: false };
  for (const member of (s.anyOf ?? []) as TSchema[]) if (member.type === "integer") return { schema: member, array: false };
  if (s.type === "array" && integerIn(s.items)) return { schema: integerIn(s.items)!.schema, array: true };
  return null;
}

const cases: { route: ReturnType<typeof adminRoutes>[number]; field: string; value: unknown }[] = [];
for (const route of adminRoutes(await t.app.routes())) {
  const body = route.hooks.body as TSchema | undefined;
  if (!body?.properties || !fixtures.has(route.key)) continue;
  for (const [field, prop] of Object.entries(body.properties as Record<string, TSchema>)) {
    const found = integerIn(prop);
    if (!found) continue;
    const n = String(found.schema.minimum ?? 1);
    cases.push({ route, field, value: found.array ? [n] : n });
  }
}

test("the walk finds integer body fields on several routes", () => {
  expect(new Set(cases.map((c) => c.route.key)).size).toBeGreaterThanOrEqual(3);
  expect(cases.map((c) => `${c.route.key} ${c.field}`)).toContain("POST /api/v1/admin/plans max_activations");
});

for (const { route, field, value } of cases) {
  test(`${route.key}: "${field}" as the string ${JSON.stringify(value)} → 400 naming it`, async () => {
    const req = await buildRequest(route, fixtures.get(route.key)!, await freshContext(t));
    const res = await t.request(route.method, req.path, { body: { ...(req.body as object), [field]: value }, key: t.adminKey });
    if (res.status !== 400) throw new Error(`expected 400, got ${res.status} ${res.text.slice(0, 200)}`);
    expect(res.body.error.code).toBe("VALIDATION_ERROR");
    expect(Object.keys(res.body.error.details.fields).some((k) => k === field || k.startsWith(`${field}.`))).toBe(true);
  }, 30_000);
}

describe("POST /license/usage quantity", () => {
  for (const quantity of ["1e1", "0x10", " 7 ", "3", 2.5, true]) {
    test(`quantity ${JSON.stringify(quantity)} → 400, nothing consumed`, async () => {
      const { license, key } = await catalog(t, {}, [quota("api", 100)]);
      const res = await post(t, "/license/usage", { license_key: key, feature: "api", quantity });
      expect(res.status).toBe(400);
      expect(res.body.error.details.fields.quantity).toBeDefined();
      expect(await t.deps.repos.usage.used(license.id, "api", "2026-11")).toBe(0);
    });
  }

  test("a JSON integer still counts", async () => {
    const { key } = await catalog(t, {}, [quota("api", 100)]);
    const res = await post(t, "/license/usage", { license_key: key, feature: "api", quantity: 7 });
    expect(res.body.data).toMatchObject({ used: 7 });
  });
});

describe("query strings still convert", () => {
  test("?limit=5 is accepted, ?limit=abc is a 400 naming limit", async () => {
    expect((await t.request("GET", "/api/v1/admin/licenses?limit=5")).status).toBe(200);
    const bad = await t.request("GET", "/api/v1/admin/licenses?limit=abc");
    expect(bad.status).toBe(400);
    expect(Object.keys(bad.body.error.details.fields)).toEqual(["limit"]);
  });
});
