// docs/products.md is true: its request/response examples are replayed in order against a fresh app
// (the fixed clock is the page's 2026-11-21T08:00Z), and the rules the page states are checked.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { join } from "node:path";
import { createTestApp, type TestApp } from "../../support/app";
import { differences, docExamples } from "../../support/doc-examples";
import { makePlan, makeProduct } from "../../support/factories";

const DOC = join(import.meta.dir, "../../../docs/products.md");
setDefaultTimeout(30_000); // builds apps: quick alone, slow on a loaded machine

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

describe("docs/products.md examples", () => {
  test("replayed in order, each documented response is the real one", async () => {
    const examples = docExamples(DOC);
    expect(examples.map((e) => `${e.method} ${e.path}`)).toEqual([
      "POST /admin/products",
      "PATCH /admin/products/{id}",
      "GET /admin/products",
      "POST /admin/products",
      "GET /admin/products/{id}/signing-keys",
      "DELETE /admin/products/{id}",
    ]);
    const statuses = [201, 200, 200, 409, 200, 200];
    let id = "";
    for (const [i, e] of examples.entries()) {
      const res = await t.request(e.method, `/api/v1${e.path.replace("{id}", id)}`, e.requestBody ? { body: e.requestBody } : {});
      if (i === 0) id = res.body.data.id;
      expect({ example: i, status: res.status }).toEqual({ example: i, status: statuses[i]! });
      expect({ example: i, differences: differences(e.response, res.body, new Set(["id"])) }).toEqual({ example: i, differences: [] });
    }
    expect((await t.request("GET", `/api/v1/admin/products/${id}`)).status).toBe(404);
  });
});

describe("docs/products.md rules", () => {
  test("delete: 409 while a plan exists; afterwards the product's bound API keys are gone too", async () => {
    const product = await makeProduct(t.deps);
    const plan = await makePlan(t.deps, product.id);
    const bound = await t.apiKey(["admin"], product.id);
    expect((await t.request("GET", "/api/v1/admin/products", { key: bound })).status).toBe(200);

    const refused = await t.request("DELETE", `/api/v1/admin/products/${product.id}`);
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe("CONFLICT");

    expect((await t.request("DELETE", `/api/v1/admin/plans/${plan.id}`)).status).toBe(200);
    expect((await t.request("DELETE", `/api/v1/admin/products/${product.id}`)).status).toBe(200);
    expect((await t.request("GET", "/api/v1/admin/products", { key: bound })).status).toBe(401);
  });

  test("a bound key lists only its product, gets 403 for another, and cannot create products", async () => {
    const mine = await makeProduct(t.deps);
    const other = await makeProduct(t.deps);
    const bound = await t.apiKey(["admin"], mine.id);
    const list = await t.request("GET", "/api/v1/admin/products", { key: bound });
    expect(list.body.data.items.map((p: { id: string }) => p.id)).toEqual([mine.id]);
    const foreign = await t.request("GET", `/api/v1/admin/products/${other.id}`, { key: bound });
    expect(foreign.status).toBe(403);
    expect(foreign.body.error.code).toBe("PRODUCT_SCOPE_MISMATCH");
    const create = await t.request("POST", "/api/v1/admin/products", { key: bound, body: { name: "X", slug: "x-bound" } });
    expect(create.status).toBe(403);
  });

  test("a slug is never an id; a renamed slug leaves the old feed URL a 404", async () => {
    const p = await makeProduct(t.deps, { slug: "old-slug" });
    expect((await t.request("GET", "/api/v1/admin/products/old-slug")).status).toBe(400);
    expect((await t.request("GET", "/api/v1/releases/old-slug/feed.json?platform=linux-x64")).status).toBe(200);
    expect((await t.request("PATCH", `/api/v1/admin/products/${p.id}`, { body: { slug: "new-slug" } })).status).toBe(200);
    const old = await t.request("GET", "/api/v1/releases/old-slug/feed.json?platform=linux-x64");
    expect(old.status).toBe(404);
    expect(old.body.error.code).toBe("NOT_FOUND");
    expect((await t.request("GET", "/api/v1/releases/new-slug/feed.json?platform=linux-x64")).status).toBe(200);
  });
});
