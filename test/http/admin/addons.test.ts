import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createTestApp, type TestApp } from "../../support/app";
import { makeLicense, makePlan, makeProduct } from "../../support/factories";
import type { Product } from "../../../src/modules/products/repo";
import { V1, expectError, expectValidation, lastAudit } from "./helpers";

let t: TestApp;
let product: Product;
beforeAll(async () => {
  t = await createTestApp();
  product = await makeProduct(t.deps);
});
afterAll(() => t.close());

let n = 0;
const createAddon = (body: Record<string, unknown> = {}) =>
  t.request("POST", `${V1}/admin/addons`, {
    body: { product_id: product.id, name: `Extra ${++n}`, feature_name: "sync", value_type: "quota", quota_limit: 50, ...body },
  });

describe("add-on catalog", () => {
  test("create, fetch, list by product, audit", async () => {
    const res = await createAddon({ name: "More sync", quota_period: "daily" });
    expect(res.status).toBe(201);
    const a = res.body.data;
    expect(a).toMatchObject({ product_id: product.id, name: "More sync", feature_name: "sync", value_type: "quota", value: "50", quota_limit: 50, quota_period: "daily" });
    expect((await t.request("GET", `${V1}/admin/addons/${a.id}`)).body.data).toEqual(a);

    const other = await makeProduct(t.deps);
    const list = await t.request("GET", `${V1}/admin/addons?product_id=${product.id}`);
    expect(list.status).toBe(200);
    expect(list.body.data.items.map((x: any) => x.id)).toContain(a.id);
    expect((await t.request("GET", `${V1}/admin/addons?product_id=${other.id}`)).body.data.items).toEqual([]);

    const row = await lastAudit(t, a.id, "addon.create");
    expect(row.changes.before).toBeNull();
    expect(row.changes.after).toMatchObject({ name: "More sync", feature_name: "sync", quota_limit: 50 });
  });

  test("validation on create", async () => {
    expectValidation(await createAddon({ feature_name: "Not Valid" }), "feature_name");
    expectValidation(await createAddon({ quota_limit: null }), "quota_limit");
    expectValidation(await createAddon({ value_type: "bool", value: "maybe", quota_limit: null }), "value");
    expectValidation(await createAddon({ value_type: "int", value: "3", quota_limit: 5 }), "quota_limit");
    expectValidation(await createAddon({ name: "" }), "name");
    expectValidation(await createAddon({ product_id: product.slug }), "product_id");
    expectValidation(await createAddon({ price: 5 }));
    expectValidation(await createAddon({ product_id: "01890000-0000-7000-8000-000000000000" }), "product_id");
  });

  test("names are unique per product (409)", async () => {
    expect((await createAddon({ name: "Dup" })).status).toBe(201);
    expectError(await createAddon({ name: "Dup" }), 409, "CONFLICT");
  });

  test("PATCH validates the merged definition and audits the diff", async () => {
    const a = (await createAddon({ quota_limit: 10 })).body.data;
    const res = await t.request("PATCH", `${V1}/admin/addons/${a.id}`, { body: { quota_limit: 25 } });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ quota_limit: 25, value: "25" });
    const row = await lastAudit(t, a.id, "addon.update");
    expect(row.changes).toEqual({ before: { value: "10", quota_limit: 10 }, after: { value: "25", quota_limit: 25 } });

    // Switching type drops the quota fields and needs a value of the new type.
    expectValidation(await t.request("PATCH", `${V1}/admin/addons/${a.id}`, { body: { value_type: "bool" } }), "value");
    const bool = await t.request("PATCH", `${V1}/admin/addons/${a.id}`, { body: { value_type: "bool", value: "true" } });
    expect(bool.body.data).toMatchObject({ value_type: "bool", value: "true", quota_limit: null, quota_period: null });
    expectValidation(await t.request("PATCH", `${V1}/admin/addons/${a.id}`, { body: { quota_limit: 3 } }), "quota_limit");
    expectValidation(await t.request("PATCH", `${V1}/admin/addons/${a.id}`, { body: {} }));
    expectValidation(await t.request("PATCH", `${V1}/admin/addons/${a.id}`, { body: { product_id: product.id } }));
    expectError(await t.request("PATCH", `${V1}/admin/addons/01890000-0000-7000-8000-000000000000`, { body: { name: "x" } }), 404, "NOT_FOUND");
  });

  test("DELETE: 409 while attached, 200 once detached, then 404", async () => {
    const plan = await makePlan(t.deps, product.id);
    const a = (await createAddon()).body.data;
    const { license } = await makeLicense(t.deps, { productId: product.id, planId: plan.id, addonIds: [a.id] });
    expectError(await t.request("DELETE", `${V1}/admin/addons/${a.id}`), 409, "CONFLICT");
    expect((await t.request("DELETE", `${V1}/admin/licenses/${license.id}/addons/${a.id}`)).status).toBe(200);
    expect((await t.request("DELETE", `${V1}/admin/addons/${a.id}`)).status).toBe(200);
    const row = await lastAudit(t, a.id, "addon.delete");
    expect(row.changes.after).toBeNull();
    expectError(await t.request("GET", `${V1}/admin/addons/${a.id}`), 404, "NOT_FOUND");
  });

  test("scopes: licenses:write reads but cannot write the catalog", async () => {
    const key = await t.apiKey(["licenses:write"]);
    const a = (await createAddon()).body.data;
    expect((await t.request("GET", `${V1}/admin/addons/${a.id}`, { key })).status).toBe(200);
    expect((await t.request("GET", `${V1}/admin/addons`, { key })).status).toBe(200);
    expectError(await t.request("PATCH", `${V1}/admin/addons/${a.id}`, { key, body: { name: "x" } }), 403, "INSUFFICIENT_SCOPE");
    expectError(await t.request("DELETE", `${V1}/admin/addons/${a.id}`, { key }), 403, "INSUFFICIENT_SCOPE");
  });
});

describe("attaching add-ons to licenses and the merge rule", () => {
  test("attach merges into the license's features; quota limits add up; detach removes", async () => {
    const plan = await makePlan(t.deps, product.id, { quotaPeriod: "monthly" }, [
      { name: "sync", valueType: "quota", value: "100", quotaLimit: 100, quotaPeriod: null },
      { name: "export.pdf", valueType: "bool", value: "false", quotaLimit: null, quotaPeriod: null },
    ]);
    const { license } = await makeLicense(t.deps, { productId: product.id, planId: plan.id });
    const more = (await createAddon({ quota_limit: 50 })).body.data;
    const pdf = (await createAddon({ feature_name: "export.pdf", value_type: "bool", value: "true", quota_limit: null })).body.data;

    const r1 = await t.request("POST", `${V1}/admin/licenses/${license.id}/addons`, { body: { addon_id: more.id } });
    expect(r1.status).toBe(200);
    const r2 = await t.request("POST", `${V1}/admin/licenses/${license.id}/addons`, { body: { addon_id: pdf.id } });
    expect(r2.body.data.addons.map((a: any) => a.id).sort()).toEqual([more.id, pdf.id].sort());
    expect(r2.body.data.features).toEqual([
      { name: "export.pdf", value_type: "bool", value: "true", quota_limit: null, quota_period: null, sources: [pdf.id] },
      { name: "sync", value_type: "quota", value: "150", quota_limit: 150, quota_period: "monthly", sources: ["plan", more.id] },
    ]);
    const row = await lastAudit(t, license.id, "license.addon.attach");
    expect(row.changes).toEqual({ before: null, after: { addon_id: pdf.id } });

    // Attaching again changes nothing and writes no second audit row.
    const again = await t.request("POST", `${V1}/admin/licenses/${license.id}/addons`, { body: { addon_id: pdf.id } });
    expect(again.status).toBe(200);
    const attaches = (await t.request("GET", `${V1}/admin/audit?entity_id=${license.id}&action=license.addon.attach`)).body.data.items;
    expect(attaches.length).toBe(2);

    const d = await t.request("DELETE", `${V1}/admin/licenses/${license.id}/addons/${pdf.id}`);
    expect(d.status).toBe(200);
    expect(d.body.data.features.find((f: any) => f.name === "export.pdf")).toMatchObject({ value: "false", sources: ["plan"] });
    expect((await lastAudit(t, license.id, "license.addon.detach")).changes).toEqual({ before: { addon_id: pdf.id }, after: null });
    expectError(await t.request("DELETE", `${V1}/admin/licenses/${license.id}/addons/${pdf.id}`), 404, "NOT_FOUND");
  });

  test("an add-on of another product, or an unknown one, is a 400", async () => {
    const plan = await makePlan(t.deps, product.id);
    const { license } = await makeLicense(t.deps, { productId: product.id, planId: plan.id });
    const other = await makeProduct(t.deps);
    const foreign = (await createAddon({ product_id: other.id })).body.data;
    expectValidation(await t.request("POST", `${V1}/admin/licenses/${license.id}/addons`, { body: { addon_id: foreign.id } }), "addon_id");
    expectValidation(
      await t.request("POST", `${V1}/admin/licenses/${license.id}/addons`, { body: { addon_id: "01890000-0000-7000-8000-000000000000" } }),
      "addon_id",
    );
    expectValidation(await t.request("POST", `${V1}/admin/licenses/${license.id}/addons`, { body: {} }), "addon_id");
    expectValidation(await t.request("POST", `${V1}/admin/licenses/${license.id}/addons`, { body: { addon_id: "nope" } }), "addon_id");
    expectError(
      await t.request("POST", `${V1}/admin/licenses/01890000-0000-7000-8000-000000000000/addons`, { body: { addon_id: foreign.id } }),
      404,
      "NOT_FOUND",
    );
  });

  test("a revoked license is frozen: attach and detach are 409", async () => {
    const plan = await makePlan(t.deps, product.id);
    const a = (await createAddon()).body.data;
    const b = (await createAddon()).body.data;
    const { license } = await makeLicense(t.deps, { productId: product.id, planId: plan.id, addonIds: [a.id] });
    expect((await t.request("POST", `${V1}/admin/licenses/${license.id}/revoke`)).status).toBe(200);
    expectError(await t.request("POST", `${V1}/admin/licenses/${license.id}/addons`, { body: { addon_id: b.id } }), 409, "INVALID_TRANSITION");
    expectError(await t.request("DELETE", `${V1}/admin/licenses/${license.id}/addons/${a.id}`), 409, "INVALID_TRANSITION");
  });
});
