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

const createPlan = (body: Record<string, unknown>) => t.request("POST", `${V1}/admin/plans`, { body: { product_id: product.id, name: "Pro", license_type: "subscription", ...body } });

describe("POST /admin/plans", () => {
  test("creates a plan with defaults and features (sorted by name)", async () => {
    const res = await createPlan({
      features: [
        { name: "sync", value_type: "quota", quota_limit: 100, quota_period: "daily" },
        { name: "export.pdf", value_type: "bool", value: "true" },
      ],
    });
    expect(res.status).toBe(201);
    const p = res.body.data;
    expect(p).toMatchObject({
      product_id: product.id,
      name: "Pro",
      license_type: "subscription",
      trial_days: 14,
      grace_days: 0,
      max_activations: null,
      max_seats: null,
      floating: false,
      floating_timeout: 30,
      support_days: 365,
      support_renewal_price_id: null,
      quota_period: "monthly",
    });
    expect(p.features.map((f: any) => [f.name, f.value_type, f.value, f.quota_limit, f.quota_period])).toEqual([
      ["export.pdf", "bool", "true", null, null],
      ["sync", "quota", "100", 100, "daily"],
    ]);
    const row = await lastAudit(t, p.id, "plan.create");
    expect(row.changes.before).toBeNull();
    expect(row.changes.after).toMatchObject({ name: "Pro", features: [{ name: "sync" }, { name: "export.pdf" }] });
    expect(row.product_id).toBe(product.id);
    expect(row.request_id).toBe(res.headers.get("x-request-id"));
  });

  test("explicit limits and settings round-trip", async () => {
    const res = await createPlan({
      license_type: "trial",
      trial_days: 7,
      grace_days: 3,
      max_activations: 5,
      max_seats: 10,
      floating: true,
      floating_timeout: 15,
      support_days: 30,
      support_renewal_price_id: "price_123",
      quota_period: "hourly",
    });
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ trial_days: 7, grace_days: 3, max_activations: 5, max_seats: 10, floating: true, floating_timeout: 15, support_days: 30, support_renewal_price_id: "price_123", quota_period: "hourly" });
    // Selling defaults: not for sale, no trial, portal offline activation on.
    expect(res.body.data).toMatchObject({ purchase_price_id: null, purchase_trial_days: 0, portal_offline_activation: true });
    const id = res.body.data.id;
    const sold = await t.request("PATCH", `${V1}/admin/plans/${id}`, { body: { purchase_price_id: "price_buy", purchase_trial_days: 14, portal_offline_activation: false } });
    expect(sold.status).toBe(200);
    expect(sold.body.data).toMatchObject({ purchase_price_id: "price_buy", purchase_trial_days: 14, portal_offline_activation: false });
    expect((await t.request("GET", `${V1}/admin/plans/${id}`)).body.data).toMatchObject({ purchase_price_id: "price_buy", purchase_trial_days: 14, portal_offline_activation: false });
    expectValidation(await t.request("PATCH", `${V1}/admin/plans/${id}`, { body: { purchase_trial_days: -1 } }), "purchase_trial_days");
    expectValidation(await t.request("PATCH", `${V1}/admin/plans/${id}`, { body: { purchase_price_id: "" } }), "purchase_price_id");
  });

  test("validation: 0 activations/seats, bad enums, unknown fields, bad features", async () => {
    expectValidation(await createPlan({ max_activations: 0 }), "max_activations");
    expectValidation(await createPlan({ max_seats: 0 }), "max_seats");
    expectValidation(await createPlan({ max_activations: 1.5 }), "max_activations");
    expectValidation(await createPlan({ license_type: "lifetime" }), "license_type");
    expectValidation(await createPlan({ quota_period: "weekly" }), "quota_period");
    expectValidation(await createPlan({ floating_timeout: 0 }), "floating_timeout");
    expectValidation(await createPlan({ name: "" }), "name");
    expectValidation(await createPlan({ colour: "red" }));
    expectValidation(await createPlan({ features: [{ name: "Bad Name", value_type: "bool", value: "true" }] }), "features");
    expectValidation(await createPlan({ features: [{ name: "pdf", value_type: "bool", value: "yes" }] }), "features.0.value");
    expectValidation(await createPlan({ features: [{ name: "n", value_type: "int", value: "x" }] }), "features.0.value");
    expectValidation(await createPlan({ features: [{ name: "q", value_type: "quota" }] }), "features.0.quota_limit");
    expectValidation(await createPlan({ features: [{ name: "q", value_type: "quota", quota_limit: -1 }] }), "features");
    expectValidation(
      await createPlan({ features: [{ name: "a", value_type: "flag" }, { name: "a", value_type: "flag" }] }),
      "features.1.name",
    );
    const missing = await t.request("POST", `${V1}/admin/plans`, { body: { name: "x" } });
    expectValidation(missing, "product_id", "license_type");
  });

  test("unknown product is a validation error; nothing is written", async () => {
    const res = await createPlan({ product_id: "01890000-0000-7000-8000-000000000000" });
    expectValidation(res, "product_id");
  });

  test("a licenses:write key cannot create plans", async () => {
    const res = await t.request("POST", `${V1}/admin/plans`, {
      key: await t.apiKey(["licenses:write"]),
      body: { product_id: product.id, name: "x", license_type: "perpetual" },
    });
    expectError(res, 403, "INSUFFICIENT_SCOPE");
  });
});

describe("GET /admin/plans", () => {
  test("filters by product UUID; a slug is not matched", async () => {
    const other = await makeProduct(t.deps);
    const mine = await makePlan(t.deps, other.id, { name: "Mine" });
    const res = await t.request("GET", `${V1}/admin/plans?product_id=${other.id}`);
    expect(res.status).toBe(200);
    expect(res.body.data.items.map((p: any) => p.id)).toEqual([mine.id]);
    expect(res.body.data.items[0].features).toEqual([]);

    expectValidation(await t.request("GET", `${V1}/admin/plans?product_id=${other.slug}`), "product_id");
    const all = await t.request("GET", `${V1}/admin/plans`);
    expect(all.body.data.items.map((p: any) => p.id)).toContain(mine.id);
  });

  test("a licenses:write key may read plans", async () => {
    const plan = await makePlan(t.deps, product.id);
    const key = await t.apiKey(["licenses:write"]);
    expect((await t.request("GET", `${V1}/admin/plans/${plan.id}`, { key })).status).toBe(200);
    expect((await t.request("GET", `${V1}/admin/plans?product_id=${product.id}`, { key })).status).toBe(200);
    expectError(await t.request("GET", `${V1}/admin/plans/${plan.id}`, { key: await t.apiKey(["releases:write"]) }), 403, "INSUFFICIENT_SCOPE");
  });

  test("GET one: 404 for an unknown id, 400 for a non-UUID", async () => {
    expectError(await t.request("GET", `${V1}/admin/plans/01890000-0000-7000-8000-000000000000`), 404, "NOT_FOUND");
    expectValidation(await t.request("GET", `${V1}/admin/plans/not-a-uuid`), "id");
  });
});

describe("PATCH /admin/plans/:id", () => {
  test("updates given fields and audits exactly what changed", async () => {
    const plan = await makePlan(t.deps, product.id, { maxActivations: 3 });
    const res = await t.request("PATCH", `${V1}/admin/plans/${plan.id}`, { body: { max_activations: null, grace_days: 5, name: plan.name } });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ max_activations: null, grace_days: 5, name: plan.name });
    const row = await lastAudit(t, plan.id, "plan.update");
    expect(row.changes).toEqual({ before: { max_activations: 3, grace_days: 0 }, after: { max_activations: null, grace_days: 5 } });
  });

  test("validation and 404", async () => {
    const plan = await makePlan(t.deps, product.id);
    expectValidation(await t.request("PATCH", `${V1}/admin/plans/${plan.id}`, { body: {} }));
    expectValidation(await t.request("PATCH", `${V1}/admin/plans/${plan.id}`, { body: { max_seats: 0 } }), "max_seats");
    expectValidation(await t.request("PATCH", `${V1}/admin/plans/${plan.id}`, { body: { product_id: product.id } }));
    expectError(await t.request("PATCH", `${V1}/admin/plans/01890000-0000-7000-8000-000000000000`, { body: { name: "x" } }), 404, "NOT_FOUND");
  });
});

describe("DELETE /admin/plans/:id", () => {
  test("deletes an unused plan (with its features) and audits it", async () => {
    const plan = await makePlan(t.deps, product.id, {}, [{ name: "pdf", valueType: "bool", value: "true", quotaLimit: null, quotaPeriod: null }]);
    const res = await t.request("DELETE", `${V1}/admin/plans/${plan.id}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, data: {} });
    expectError(await t.request("GET", `${V1}/admin/plans/${plan.id}`), 404, "NOT_FOUND");
    const row = await lastAudit(t, plan.id, "plan.delete");
    expect(row.changes.after).toBeNull();
    expect(row.changes.before.features).toEqual([{ name: "pdf", value_type: "bool", value: "true", quota_limit: null, quota_period: null, stripe_meter: null }]);
    expectError(await t.request("DELETE", `${V1}/admin/plans/${plan.id}`), 404, "NOT_FOUND");
  });

  test("409 CONFLICT while a license uses the plan; no audit row", async () => {
    const plan = await makePlan(t.deps, product.id);
    await makeLicense(t.deps, { productId: product.id, planId: plan.id });
    const res = await t.request("DELETE", `${V1}/admin/plans/${plan.id}`);
    expectError(res, 409, "CONFLICT");
    expect((await t.request("GET", `${V1}/admin/plans/${plan.id}`)).status).toBe(200);
    const rows = await t.request("GET", `${V1}/admin/audit?entity_id=${plan.id}&action=plan.delete`);
    expect(rows.body.data.items).toEqual([]);
  });
});

describe("plan features", () => {
  const put = (planId: string, name: string, body: unknown) => t.request("PUT", `${V1}/admin/plans/${planId}/features/${name}`, { body });

  test("upsert creates, then replaces; the plan shows the features", async () => {
    const plan = await makePlan(t.deps, product.id);
    const created = await put(plan.id, "seats.max", { value_type: "int", value: "25" });
    expect(created.status).toBe(200);
    expect(created.body.data).toMatchObject({ name: "seats.max", value_type: "int", value: "25", quota_limit: null, quota_period: null });
    let row = await lastAudit(t, plan.id, "plan.feature.upsert");
    expect(row.changes).toEqual({ feature: "seats.max", before: null, after: { name: "seats.max", value_type: "int", value: "25", quota_limit: null, quota_period: null, stripe_meter: null } });

    const replaced = await put(plan.id, "seats.max", { value_type: "quota", quota_limit: 40, quota_period: "yearly" });
    expect(replaced.status).toBe(200);
    expect(replaced.body.data).toMatchObject({ value_type: "quota", value: "40", quota_limit: 40, quota_period: "yearly" });
    row = await lastAudit(t, plan.id, "plan.feature.upsert");
    expect(row.changes.before).toEqual({ value_type: "int", value: "25", quota_limit: null, quota_period: null });

    expect((await put(plan.id, "beta", { value_type: "flag" })).body.data.value).toBe("true");
    // A quota feature may report its usage to a Stripe meter; no other kind counts usage.
    const metered = await put(plan.id, "seats.max", { value_type: "quota", quota_limit: 40, stripe_meter: "seat_hours" });
    expect(metered.body.data).toMatchObject({ value_type: "quota", stripe_meter: "seat_hours" });
    expect((await lastAudit(t, plan.id, "plan.feature.upsert")).changes).toEqual({ feature: "seats.max", before: { quota_period: "yearly", stripe_meter: null }, after: { quota_period: null, stripe_meter: "seat_hours" } });
    expectValidation(await put(plan.id, "beta", { value_type: "flag", stripe_meter: "x" }), "stripe_meter");
    expectValidation(await put(plan.id, "seats.max", { value_type: "quota", quota_limit: 1, stripe_meter: "bad name!" }), "stripe_meter");
    const got = await t.request("GET", `${V1}/admin/plans/${plan.id}`);
    expect(got.body.data.features.map((f: any) => f.name)).toEqual(["beta", "seats.max"]);
  });

  test("validation per value type and feature name", async () => {
    const plan = await makePlan(t.deps, product.id);
    expectValidation(await put(plan.id, "pdf", { value_type: "bool", value: "1" }), "value");
    expectValidation(await put(plan.id, "pdf", { value_type: "bool" }), "value");
    expectValidation(await put(plan.id, "n", { value_type: "int", value: "12abc" }), "value");
    expectValidation(await put(plan.id, "q", { value_type: "quota", value: "5" }), "quota_limit");
    expectValidation(await put(plan.id, "q", { value_type: "quota", quota_limit: 5, value: "6" }), "value");
    expectValidation(await put(plan.id, "s", { value_type: "string", value: "x", quota_limit: 3 }), "quota_limit");
    expectValidation(await put(plan.id, "s", { value_type: "text", value: "x" }), "value_type");
    expectValidation(await put(plan.id, "Upper", { value_type: "flag" }), "name");
    expectValidation(await put(plan.id, "x".repeat(65), { value_type: "flag" }), "name");
    expectError(await put("01890000-0000-7000-8000-000000000000", "pdf", { value_type: "flag" }), 404, "NOT_FOUND");
    const got = await t.request("GET", `${V1}/admin/plans/${plan.id}`);
    expect(got.body.data.features).toEqual([]);
  });

  test("delete removes a feature and audits it; unknown feature is 404", async () => {
    const plan = await makePlan(t.deps, product.id, {}, [{ name: "pdf", valueType: "bool", value: "true", quotaLimit: null, quotaPeriod: null }]);
    const res = await t.request("DELETE", `${V1}/admin/plans/${plan.id}/features/pdf`);
    expect(res.status).toBe(200);
    expect((await t.request("GET", `${V1}/admin/plans/${plan.id}`)).body.data.features).toEqual([]);
    const row = await lastAudit(t, plan.id, "plan.feature.delete");
    expect(row.changes).toEqual({ feature: "pdf", before: { name: "pdf", value_type: "bool", value: "true", quota_limit: null, quota_period: null, stripe_meter: null }, after: null });
    expectError(await t.request("DELETE", `${V1}/admin/plans/${plan.id}/features/pdf`), 404, "NOT_FOUND");
  });
});
