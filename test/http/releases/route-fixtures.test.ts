// Runs this module's route fixtures (test/support/route-fixtures/releases.ts) through the auth cases
// the route-table test applies: every fixture succeeds for admin and for a releases:write key bound
// to the product, and is refused for a key bound to another product, a licenses:write key and no key.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createTestApp, type TestApp } from "../../support/app";
import { makeProduct } from "../../support/factories";
import fixtures from "../../support/route-fixtures/releases";
import type { Product } from "../../../src/modules/products/repo";

let t: TestApp;
let product: Product;
let other: Product;
beforeAll(async () => {
  t = await createTestApp();
  product = await makeProduct(t.deps);
  other = await makeProduct(t.deps);
});
afterAll(() => t.close());

async function call(route: string, key: string | null) {
  const [method, template] = route.split(" ") as [string, string];
  const req = await fixtures[route]!.build({ t, product });
  let path = template;
  for (const [k, v] of Object.entries(req.params ?? {})) path = path.replace(`:${k}`, v);
  if (req.query) path += `?${new URLSearchParams(req.query)}`;
  return t.request(method, path, { key, body: req.body });
}

const routes = Object.keys(fixtures);
test("every release admin route is registered and has a fixture", async () => {
  const registered = (await t.app.routes()).map((r) => `${r.method} ${r.path}`).filter((r) => /\/admin\/(releases|artifacts)|\/releases$/.test(r));
  expect(registered.sort()).toEqual(routes.sort());
});

describe.each(routes)("%s", (route) => {
  test("admin → 2xx", async () => {
    const res = await call(route, t.adminKey);
    expect(res.body?.error).toBeUndefined();
    expect([200, 201]).toContain(res.status);
  });
  test("releases:write bound to the product → 2xx", async () => {
    expect([200, 201]).toContain((await call(route, await t.apiKey(["releases:write"], product.id))).status);
  });
  test("bound to another product → 403 PRODUCT_SCOPE_MISMATCH", async () => {
    const res = await call(route, await t.apiKey(["releases:write"], other.id));
    expect([res.status, res.body.error.code]).toEqual([403, "PRODUCT_SCOPE_MISMATCH"]);
  });
  test("licenses:write → 403 INSUFFICIENT_SCOPE; no key → 401", async () => {
    expect((await call(route, await t.apiKey(["licenses:write"]))).body.error.code).toBe("INSUFFICIENT_SCOPE");
    expect((await call(route, null)).status).toBe(401);
  });
});
