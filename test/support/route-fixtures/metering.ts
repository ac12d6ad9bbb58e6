import type { RouteFixtures } from "./types";

// The metered-billing queue spans every product: system-wide and admin only. (The auth matrix runs
// its app against a fake Stripe, so the route answers 200 rather than 503.)
export default {
  "POST /api/v1/admin/system/run-metered-sync": {
    scopes: [],
    productScoped: false,
    build: () => ({}),
  },
} satisfies RouteFixtures;
