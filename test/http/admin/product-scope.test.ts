// Product-bound API keys on the catalog and license routes (spec, API key rule 3): a key bound to
// product A gets 403 PRODUCT_SCOPE_MISMATCH for B's resources — reads, list filters and writes —
// and a bound key listing without product_id sees only A.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createTestApp, type TestApp } from "../../support/app";
import { makeLicense, makePlan, makeProduct } from "../../support/factories";
import { createAddon } from "../../../src/modules/addons/service";
import { SYSTEM_ACTOR, type Scope } from "../../../src/shared/actor";
import type { Product } from "../../../src/modules/products/repo";
import { V1, expectError } from "./helpers";

let t: TestApp;
let A: Product;
let B: Product;
beforeAll(async () => {
  t = await createTestApp();
  A = await makeProduct(t.deps);
  B = await makeProduct(t.deps);
});
afterAll(() => t.close());

async function world(product: Product) {
  const plan = await makePlan(t.deps, product.id, {}, [{ name: "pdf", valueType: "bool", value: "true", quotaLimit: null, quotaPeriod: null }]);
  const addon = await createAddon(t.deps, SYSTEM_ACTOR, { productId: product.id, name: `Extra ${plan.id}`, featureName: "sync", valueType: "quota", quotaLimit: 5 });
  const { license } = await makeLicense(t.deps, { productId: product.id, planId: plan.id });
  return { plan, addon, license };
}

interface Case {
  name: string;
  method: string;
  path: (w: Awaited<ReturnType<typeof world>>, p: Product) => string;
  body?: (w: Awaited<ReturnType<typeof world>>, p: Product) => unknown;
  /** Scopes a key needs for this route (admin covers all). */
  scopes: Scope[];
}

const CASES: Case[] = [
  { name: "list plans filtered to B", method: "GET", path: (_w, p) => `/admin/plans?product_id=${p.id}`, scopes: ["licenses:write"] },
  { name: "get B's plan", method: "GET", path: (w) => `/admin/plans/${w.plan.id}`, scopes: ["licenses:write"] },
  { name: "create a plan for B", method: "POST", path: () => `/admin/plans`, body: (_w, p) => ({ product_id: p.id, name: "x", license_type: "perpetual" }), scopes: ["admin"] },
  { name: "update B's plan", method: "PATCH", path: (w) => `/admin/plans/${w.plan.id}`, body: () => ({ name: "x" }), scopes: ["admin"] },
  { name: "delete B's plan", method: "DELETE", path: (w) => `/admin/plans/${w.plan.id}`, scopes: ["admin"] },
  { name: "upsert a feature of B's plan", method: "PUT", path: (w) => `/admin/plans/${w.plan.id}/features/x`, body: () => ({ value_type: "flag" }), scopes: ["admin"] },
  { name: "delete a feature of B's plan", method: "DELETE", path: (w) => `/admin/plans/${w.plan.id}/features/pdf`, scopes: ["admin"] },
  { name: "list add-ons filtered to B", method: "GET", path: (_w, p) => `/admin/addons?product_id=${p.id}`, scopes: ["licenses:write"] },
  { name: "get B's add-on", method: "GET", path: (w) => `/admin/addons/${w.addon.id}`, scopes: ["licenses:write"] },
  { name: "create an add-on for B", method: "POST", path: () => `/admin/addons`, body: (_w, p) => ({ product_id: p.id, name: "y", feature_name: "f", value_type: "flag" }), scopes: ["admin"] },
  { name: "update B's add-on", method: "PATCH", path: (w) => `/admin/addons/${w.addon.id}`, body: () => ({ name: "z" }), scopes: ["admin"] },
  { name: "delete B's add-on", method: "DELETE", path: (w) => `/admin/addons/${w.addon.id}`, scopes: ["admin"] },
  { name: "issue a license for B", method: "POST", path: () => `/admin/licenses`, body: (w, p) => ({ product_id: p.id, plan_id: w.plan.id, email: "a@b.test" }), scopes: ["licenses:write"] },
  { name: "list licenses filtered to B", method: "GET", path: (_w, p) => `/admin/licenses?product_id=${p.id}`, scopes: ["licenses:write"] },
  { name: "list licenses filtered to B's plan", method: "GET", path: (w) => `/admin/licenses?plan_id=${w.plan.id}`, scopes: ["licenses:write"] },
  { name: "get B's license", method: "GET", path: (w) => `/admin/licenses/${w.license.id}`, scopes: ["licenses:write"] },
  { name: "revoke B's license", method: "POST", path: (w) => `/admin/licenses/${w.license.id}/revoke`, scopes: ["licenses:write"] },
  { name: "suspend B's license", method: "POST", path: (w) => `/admin/licenses/${w.license.id}/suspend`, scopes: ["licenses:write"] },
  { name: "reinstate B's license", method: "POST", path: (w) => `/admin/licenses/${w.license.id}/reinstate`, scopes: ["licenses:write"] },
  { name: "change B's license plan", method: "POST", path: (w) => `/admin/licenses/${w.license.id}/change-plan`, body: (w) => ({ plan_id: w.plan.id }), scopes: ["licenses:write"] },
  { name: "set B's license expiry", method: "POST", path: (w) => `/admin/licenses/${w.license.id}/valid-until`, body: () => ({ valid_until: null }), scopes: ["licenses:write"] },
  { name: "set B's support window", method: "POST", path: (w) => `/admin/licenses/${w.license.id}/support-until`, body: () => ({ support_until: null }), scopes: ["licenses:write"] },
  { name: "attach an add-on to B's license", method: "POST", path: (w) => `/admin/licenses/${w.license.id}/addons`, body: (w) => ({ addon_id: w.addon.id }), scopes: ["licenses:write"] },
  { name: "detach an add-on from B's license", method: "DELETE", path: (w) => `/admin/licenses/${w.license.id}/addons/${w.addon.id}`, scopes: ["licenses:write"] },
];

describe("a key bound to product A on product B's resources", () => {
  for (const c of CASES) {
    for (const scope of new Set<Scope>(["admin", ...c.scopes])) {
      test(`${scope} key bound to A: ${c.name} → 403 PRODUCT_SCOPE_MISMATCH; nothing changes`, async () => {
        const w = await world(B);
        const key = await t.apiKey([scope], A.id);
        const before = (await t.request("GET", `${V1}/admin/audit?product_id=${B.id}&limit=200`)).body.data.items.length;
        const res = await t.request(c.method, `${V1}${c.path(w, B)}`, { key, body: c.body?.(w, B) });
        expectError(res, 403, "PRODUCT_SCOPE_MISMATCH");
        const after = (await t.request("GET", `${V1}/admin/audit?product_id=${B.id}&limit=200`)).body.data.items.length;
        expect(after).toBe(before);
      });

      // The same request on A's own resources passes the product check. (Some answer 404/409 for
      // state reasons — deleting a plan in use, reinstating an active license — never 401/403;
      // the route fixtures prove the 2xx paths.)
      test(`${scope} key bound to A: ${c.name.replace(/\bB\b/g, "A")} → not refused`, async () => {
        const w = await world(A);
        const key = await t.apiKey([scope], A.id);
        const res = await t.request(c.method, `${V1}${c.path(w, A)}`, { key, body: c.body?.(w, A) });
        expect([401, 403]).not.toContain(res.status);
        expect(res.status).toBeLessThan(500);
      });
    }
  }
});

describe("bound-key lists without a product filter see only their product", () => {
  for (const scope of ["admin", "licenses:write"] as Scope[]) {
    test(`${scope} key`, async () => {
      const wa = await world(A);
      const wb = await world(B);
      const key = await t.apiKey([scope], A.id);
      const plans = (await t.request("GET", `${V1}/admin/plans`, { key })).body.data.items;
      expect(plans.length).toBeGreaterThan(0);
      expect(plans.every((p: any) => p.product_id === A.id)).toBe(true);
      expect(plans.map((p: any) => p.id)).toContain(wa.plan.id);
      const addons = (await t.request("GET", `${V1}/admin/addons`, { key })).body.data.items;
      expect(addons.every((a: any) => a.product_id === A.id)).toBe(true);
      expect(addons.map((a: any) => a.id)).toContain(wa.addon.id);
      const licenses = (await t.request("GET", `${V1}/admin/licenses?limit=200`, { key })).body.data.items;
      expect(licenses.every((l: any) => l.product_id === A.id)).toBe(true);
      expect(licenses.map((l: any) => l.id)).toContain(wa.license.id);
      // Searching for B's license id finds nothing rather than leaking it.
      const search = await t.request("GET", `${V1}/admin/licenses?search=${wb.license.id}`, { key });
      expect(search.body.data.items).toEqual([]);
    });
  }

  test("a bound key cannot attach B's add-on to A's license or move it to B's plan (400)", async () => {
    const wa = await world(A);
    const wb = await world(B);
    const key = await t.apiKey(["licenses:write"], A.id);
    const attach = await t.request("POST", `${V1}/admin/licenses/${wa.license.id}/addons`, { key, body: { addon_id: wb.addon.id } });
    expectError(attach, 400, "VALIDATION_ERROR");
    const move = await t.request("POST", `${V1}/admin/licenses/${wa.license.id}/change-plan`, { key, body: { plan_id: wb.plan.id } });
    expectError(move, 400, "VALIDATION_ERROR");
  });
});
