import type { RouteFixtures } from "./types";

export default {
  "GET /api/v1/admin/audit": {
    scopes: [],
    // The audit log spans every product and system action.
    productScoped: false,
    build: ({ product }) => ({ query: { entity_type: "product", entity_id: product.id, limit: "10" } }),
  },
} satisfies RouteFixtures;
