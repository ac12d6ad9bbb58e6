import type { RouteFixtures } from "./types";

// Background jobs are system-wide and admin only: no other scope, and no product-bound key.
export default {
  "GET /api/v1/admin/system/jobs": {
    scopes: [],
    productScoped: false,
    build: () => ({}),
  },
  "POST /api/v1/admin/system/jobs/:name/run": {
    scopes: [],
    productScoped: false,
    // Each case runs the pass to the end, releasing its lease, so the next case can run it again.
    build: () => ({ params: { name: "prune-idempotency" } }),
  },
} satisfies RouteFixtures;
