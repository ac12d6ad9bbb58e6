import type { RouteFixtures } from "./types";
import { runPass } from "../../../src/jobs/runner";

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
  "GET /api/v1/admin/system/jobs/:name/runs/:fence": {
    scopes: [],
    productScoped: false,
    // A finished run of a short pass, so the route has a run on record to show.
    build: async ({ t }) => {
      const outcome = await runPass(t.deps, "prune-idempotency", { trigger: "admin" });
      return { params: { name: "prune-idempotency", fence: String(outcome!.fence) } };
    },
  },
} satisfies RouteFixtures;
