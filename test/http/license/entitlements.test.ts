import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createTestApp, type TestApp } from "../../support/app";
import { attachAddon, catalog, decodeToken, feature, patchLicense, post, quota } from "../../support/license-api";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp(); // clock: 2026-11-21T08:00:00Z
});
afterAll(() => t.close());

describe("POST /license/entitlements", () => {
  test("every feature with the spec's per-feature object, add-ons merged, counters included, no token", async () => {
    const { product, plan, license, key } = await catalog(t, { quotaPeriod: "monthly" }, [
      feature("export"),
      feature("beta", { valueType: "flag", value: "false" }),
      feature("projects", { valueType: "int", value: "10" }),
      quota("api", 100, "daily"),
      quota("builds", 20),
    ]);
    await attachAddon(t, product.id, license.id, quota("api", 50));
    await attachAddon(t, product.id, license.id, feature("beta", { valueType: "flag", value: "true" }));
    await attachAddon(t, product.id, license.id, feature("sso"));
    await post(t, "/license/usage", { license_key: key, feature: "api", quantity: 30 });

    const res = await post(t, "/license/entitlements", { license_key: key });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body.data).sort()).toEqual(["features", "licensed", "plan_id", "plan_name", "status"]);
    expect(res.body.data).toMatchObject({ licensed: true, status: "active", plan_id: plan.id, plan_name: plan.name });
    const f = res.body.data.features;
    expect(Object.keys(f)).toEqual(["api", "beta", "builds", "export", "projects", "sso"]);
    expect(f.api).toEqual({
      enabled: true,
      value_type: "quota",
      value: "150",
      used: 30,
      limit: 150,
      remaining: 120,
      period: "daily",
      resets_at: "2026-11-22T00:00:00.000Z",
    });
    expect(f.builds).toEqual({
      enabled: true,
      value_type: "quota",
      value: "20",
      used: 0,
      limit: 20,
      remaining: 20,
      period: "monthly",
      resets_at: "2026-12-01T00:00:00.000Z",
    });
    expect(f.export).toEqual({
      enabled: true,
      value_type: "bool",
      value: "true",
      used: null,
      limit: null,
      remaining: null,
      period: "monthly",
      resets_at: "2026-12-01T00:00:00.000Z",
    });
    expect(f.beta).toMatchObject({ enabled: true, value_type: "flag", value: "true" });
    expect(f.projects).toMatchObject({ enabled: true, value_type: "int", value: "10", used: null });
    expect(f.sso).toMatchObject({ enabled: true, value_type: "bool" });
    expect(JSON.stringify(res.body)).not.toContain("token");
  });

  // docs/admin-api.md "Plan features": a flag is on whenever it is present and its value may carry a
  // label (the catalog accepts any value for it); bool is the type that can be explicitly off.
  test("a flag created through the admin API is on whatever its label, in entitlements, verify and the token", async () => {
    const { product } = await catalog(t);
    const plan = await t.request("POST", "/api/v1/admin/plans", {
      body: {
        product_id: product.id,
        name: "Flags",
        license_type: "perpetual",
        features: [
          { name: "beta", value_type: "flag" },
          { name: "variant", value_type: "flag", value: "early-access" },
          { name: "off", value_type: "bool", value: "false" },
        ],
      },
    });
    expect(plan.status).toBe(201);
    const issued = await t.request("POST", "/api/v1/admin/licenses", {
      body: { product_id: product.id, plan_id: plan.body.data.id, email: "flags@example.com" },
    });
    const key = issued.body.data.license_key;
    const ent = await post(t, "/license/entitlements", { license_key: key });
    expect(ent.body.data.features.beta).toMatchObject({ enabled: true, value_type: "flag", value: "true" });
    expect(ent.body.data.features.variant).toMatchObject({ enabled: true, value_type: "flag", value: "early-access" });
    expect(ent.body.data.features.off).toMatchObject({ enabled: false, value_type: "bool" });
    await post(t, "/license/activate", { license_key: key, identifier: "dev" });
    const verified = await post(t, "/license/verify", { license_key: key, identifier: "dev" });
    expect(verified.body.data.features).toEqual({ beta: true, off: false, variant: true });
    expect(decodeToken(verified.body.data.token).ftr).toEqual({ beta: true, off: false, variant: true });
  });

  test("single-feature check returns only that feature; an absent feature is enabled=false", async () => {
    const { key } = await catalog(t, {}, [feature("export"), quota("api", 5)]);
    const one = await post(t, "/license/entitlements", { license_key: key, feature: "api" });
    expect(Object.keys(one.body.data.features)).toEqual(["api"]);
    expect(one.body.data.features.api.limit).toBe(5);
    const none = await post(t, "/license/entitlements", { license_key: key, feature: "teleport" });
    expect(none.status).toBe(200);
    expect(none.body.data.features).toEqual({
      teleport: {
        enabled: false,
        value_type: "bool",
        value: "false",
        used: null,
        limit: null,
        remaining: null,
        period: "monthly",
        resets_at: "2026-12-01T00:00:00.000Z",
      },
    });
  });

  test("unknown, malformed, other-product and unusable keys answer verify's 404 body", async () => {
    const { key, license } = await catalog(t);
    const other = await catalog(t);
    const reference = (await post(t, "/license/verify", { license_key: "junk", identifier: "x" })).text;
    const probes = [
      { license_key: "KW-AAAAAAAA-AAAAAAAA-AAAAAAAA-AAAAAAAA" },
      { license_key: "junk" },
      { license_key: key, product_id: other.product.id },
    ];
    for (const body of probes) {
      const res = await post(t, "/license/entitlements", body);
      expect(res.status).toBe(404);
      expect(res.text).toBe(reference);
    }
    for (const status of ["suspended", "revoked", "expired", "canceled"] as const) {
      await patchLicense(t, license.id, { status });
      const res = await post(t, "/license/entitlements", { license_key: key });
      expect(res.status).toBe(404);
      expect(res.text).toBe(reference);
    }
  });
});
