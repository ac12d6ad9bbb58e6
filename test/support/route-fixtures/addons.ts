import type { RouteFixtures } from "./types";
import { newId } from "../../../src/shared/ids";
import { SYSTEM_ACTOR } from "../../../src/shared/actor";
import { createAddon } from "../../../src/modules/addons/service";
import type { RouteFixtureContext } from "./types";

// Add-on reads are open to licenses:write keys (they attach add-ons to licenses); writes are admin only.
const READ = ["licenses:write"] as const;

export async function fixtureAddon({ t, product }: RouteFixtureContext) {
  return await createAddon(t.deps, SYSTEM_ACTOR, {
    productId: product.id,
    name: `Fixture add-on ${newId()}`,
    featureName: "sync",
    valueType: "quota",
    quotaLimit: 50,
  });
}

export default {
  "POST /api/v1/admin/addons": {
    scopes: [],
    build: ({ product }) => ({
      body: { product_id: product.id, name: `Extra ${newId()}`, feature_name: "sync", value_type: "quota", quota_limit: 25 },
    }),
  },
  "GET /api/v1/admin/addons": {
    scopes: [...READ],
    build: ({ product }) => ({ query: { product_id: product.id } }),
  },
  "GET /api/v1/admin/addons/:id": {
    scopes: [...READ],
    build: async (ctx) => ({ params: { id: (await fixtureAddon(ctx)).id } }),
  },
  "PATCH /api/v1/admin/addons/:id": {
    scopes: [],
    build: async (ctx) => ({ params: { id: (await fixtureAddon(ctx)).id }, body: { quota_limit: 75 } }),
  },
  "DELETE /api/v1/admin/addons/:id": {
    scopes: [],
    // Not attached to any license (an attached add-on is 409).
    build: async (ctx) => ({ params: { id: (await fixtureAddon(ctx)).id } }),
  },
} satisfies RouteFixtures;
