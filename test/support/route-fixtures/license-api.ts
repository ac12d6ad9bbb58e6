// Admin routes of the public-license-API branch: usage counters, floating sessions, activation removal.
import type { RouteFixtures } from "./types";
import { makeLicense, makePlan } from "../factories";
import { activate } from "../../../src/modules/activations/service";
import type { RouteFixtureContext } from "./types";

async function licenseWithQuota({ t, product }: RouteFixtureContext) {
  const plan = await makePlan(t.deps, product.id, { floating: true, maxActivations: null }, [
    { name: "api", valueType: "quota", value: "10", quotaLimit: 10, quotaPeriod: null },
  ]);
  return await makeLicense(t.deps, { productId: product.id, planId: plan.id });
}

const fixtures: RouteFixtures = {
  "GET /api/v1/admin/licenses/:id/usage": {
    scopes: ["licenses:write"],
    build: async (ctx) => ({ params: { id: (await licenseWithQuota(ctx)).license.id } }),
  },
  "POST /api/v1/admin/licenses/:id/usage/reset": {
    scopes: ["licenses:write"],
    build: async (ctx) => ({ params: { id: (await licenseWithQuota(ctx)).license.id }, body: { feature: "api" } }),
  },
  "GET /api/v1/admin/licenses/:id/floating-sessions": {
    scopes: ["licenses:write"],
    build: async (ctx) => ({ params: { id: (await licenseWithQuota(ctx)).license.id } }),
  },
  "GET /api/v1/admin/licenses/:id/activations": {
    scopes: ["licenses:write"],
    build: async (ctx) => ({ params: { id: (await licenseWithQuota(ctx)).license.id } }),
  },
  "DELETE /api/v1/admin/licenses/:id/activations/:activation_id": {
    scopes: ["licenses:write"],
    build: async (ctx) => {
      const { license, key } = await licenseWithQuota(ctx);
      await activate(ctx.t.deps, { licenseKey: key, identifier: "fixture-device", identifierType: "device", label: null, ip: "192.0.2.1" });
      const [activation] = await ctx.t.deps.repos.activations.listByLicense(license.id);
      return { params: { id: license.id, activation_id: activation!.id } };
    },
  },
};

export default fixtures;
