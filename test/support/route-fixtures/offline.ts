import type { RouteFixtureContext, RouteFixtures } from "./types";
import { makeLicense, makePlan } from "../factories";
import { SYSTEM_ACTOR } from "../../../src/shared/actor";
import { activateOfflineSelfService } from "../../../src/modules/offline/service";

// Spec (API key rules): licenses:write manages licenses; offline tokens and offline activations are part of that.
const WRITE = ["licenses:write"] as const;

async function fixtureLicense({ t, product }: RouteFixtureContext) {
  const plan = await makePlan(t.deps, product.id);
  return (await makeLicense(t.deps, { productId: product.id, planId: plan.id })).license;
}

export default {
  "POST /api/v1/admin/licenses/:id/offline-token": {
    scopes: [...WRITE],
    build: async (ctx) => ({
      params: { id: (await fixtureLicense(ctx)).id },
      body: { identifier: "machine-fixture", expires_at: "2031-01-01T00:00:00Z" },
    }),
  },
  "GET /api/v1/admin/licenses/:id/offline-activations": {
    scopes: [...WRITE],
    build: async (ctx) => ({ params: { id: (await fixtureLicense(ctx)).id } }),
  },
  "DELETE /api/v1/admin/licenses/:id/offline-activations/:activation_id": {
    scopes: [...WRITE],
    build: async (ctx) => {
      const license = await fixtureLicense(ctx);
      const made = await activateOfflineSelfService(ctx.t.deps, SYSTEM_ACTOR, license.id, "machine-fixture");
      return { params: { id: license.id, activation_id: made.activation.id } };
    },
  },
} satisfies RouteFixtures;
