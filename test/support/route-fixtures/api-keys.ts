import type { RouteFixtures } from "./types";
import { SYSTEM_ACTOR } from "../../../src/shared/actor";
import { createApiKey } from "../../../src/modules/api-keys/service";

// API keys are system-wide: admin only, and no product-bound key may list, mint or revoke them.
export default {
  "POST /api/v1/admin/api-keys": {
    scopes: [],
    productScoped: false,
    build: ({ product }) => ({ body: { name: "fixture key", scopes: ["releases:write"], product_id: product.id } }),
  },
  "GET /api/v1/admin/api-keys": {
    scopes: [],
    productScoped: false,
    build: () => ({}),
  },
  "POST /api/v1/admin/api-keys/:id/revoke": {
    scopes: [],
    productScoped: false,
    build: async ({ t, product }) => {
      const { record } = await createApiKey(t.deps, SYSTEM_ACTOR, { name: "to revoke", scopes: ["licenses:write"], productId: product.id });
      return { params: { id: record.id } };
    },
  },
} satisfies RouteFixtures;
