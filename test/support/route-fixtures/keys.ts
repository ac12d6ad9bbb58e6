import type { RouteFixtures } from "./types";

export default {
  "POST /api/v1/admin/signing-keys/rotate": {
    scopes: [],
    // The license-token key is shared by every product.
    productScoped: false,
    build: () => ({}),
  },
} satisfies RouteFixtures;
