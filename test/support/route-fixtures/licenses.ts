import type { RouteFixtureContext, RouteFixtures } from "./types";
import { makeLicense, makePlan } from "../factories";
import { SYSTEM_ACTOR } from "../../../src/shared/actor";
import { applyLicenseAction } from "../../../src/modules/licenses/service";
import { fixtureAddon } from "./addons";

// Spec (API key rules): licenses:write creates, updates and manages licenses, and may read them.
const WRITE = ["licenses:write"] as const;

async function fixtureLicense(ctx: RouteFixtureContext, addonIds: string[] = []) {
  const plan = await makePlan(ctx.t.deps, ctx.product.id);
  return (await makeLicense(ctx.t.deps, { productId: ctx.product.id, planId: plan.id, addonIds })).license;
}

export default {
  "POST /api/v1/admin/licenses": {
    scopes: [...WRITE],
    build: async ({ t, product }) => ({
      body: {
        product_id: product.id,
        plan_id: (await makePlan(t.deps, product.id)).id,
        email: "fixture@example.com",
        valid_until: "2030-01-01T00:00:00Z",
        support_until: null,
        external_customer_id: "cus_fixture",
      },
    }),
  },
  "GET /api/v1/admin/licenses": {
    scopes: [...WRITE],
    build: ({ product }) => ({ query: { product_id: product.id, limit: "10" } }),
  },
  "GET /api/v1/admin/licenses/:id": {
    scopes: [...WRITE],
    build: async (ctx) => ({ params: { id: (await fixtureLicense(ctx)).id } }),
  },
  "POST /api/v1/admin/licenses/:id/revoke": {
    scopes: [...WRITE],
    build: async (ctx) => ({ params: { id: (await fixtureLicense(ctx)).id } }),
  },
  "POST /api/v1/admin/licenses/:id/suspend": {
    scopes: [...WRITE],
    build: async (ctx) => ({ params: { id: (await fixtureLicense(ctx)).id } }),
  },
  "POST /api/v1/admin/licenses/:id/reinstate": {
    scopes: [...WRITE],
    // Reinstate needs a suspended (or expired/canceled) license.
    build: async (ctx) => {
      const license = await fixtureLicense(ctx);
      await applyLicenseAction(ctx.t.deps, SYSTEM_ACTOR, license.id, "suspend");
      return { params: { id: license.id } };
    },
  },
  "POST /api/v1/admin/licenses/:id/change-plan": {
    scopes: [...WRITE],
    build: async (ctx) => ({ params: { id: (await fixtureLicense(ctx)).id }, body: { plan_id: (await makePlan(ctx.t.deps, ctx.product.id)).id } }),
  },
  "POST /api/v1/admin/licenses/:id/valid-until": {
    scopes: [...WRITE],
    build: async (ctx) => ({ params: { id: (await fixtureLicense(ctx)).id }, body: { valid_until: "2031-06-30T12:00:00Z" } }),
  },
  "POST /api/v1/admin/licenses/:id/support-until": {
    scopes: [...WRITE],
    build: async (ctx) => ({ params: { id: (await fixtureLicense(ctx)).id }, body: { support_until: "2031-06-30T12:00:00Z" } }),
  },
  "POST /api/v1/admin/licenses/:id/addons": {
    scopes: [...WRITE],
    build: async (ctx) => ({ params: { id: (await fixtureLicense(ctx)).id }, body: { addon_id: (await fixtureAddon(ctx)).id } }),
  },
  "DELETE /api/v1/admin/licenses/:id/addons/:addon_id": {
    scopes: [...WRITE],
    build: async (ctx) => {
      const addon = await fixtureAddon(ctx);
      return { params: { id: (await fixtureLicense(ctx, [addon.id])).id, addon_id: addon.id } };
    },
  },
} satisfies RouteFixtures;
