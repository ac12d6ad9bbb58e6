import type { RouteFixtures } from "./types";
import { makeLicense, makePlan } from "../factories";

// Spec (API key rules): licenses:write manages licenses; issuing an offline token is one of those acts.
export default {
  "POST /api/v1/admin/licenses/:id/offline-token": {
    scopes: ["licenses:write"],
    build: async ({ t, product }) => {
      const plan = await makePlan(t.deps, product.id);
      const { license } = await makeLicense(t.deps, { productId: product.id, planId: plan.id });
      return { params: { id: license.id }, body: { identifier: "machine-fixture", expires_at: "2031-01-01T00:00:00Z" } };
    },
  },
} satisfies RouteFixtures;
