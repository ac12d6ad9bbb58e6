import type { RouteFixtures } from "./types";
import { makeLicense, makePlan } from "../factories";

// The billing view of a license: read like the other license routes (licenses:write or read).
export default {
  "GET /api/v1/admin/licenses/:id/billing": {
    scopes: ["licenses:write"],
    build: async (ctx) => {
      const plan = await makePlan(ctx.t.deps, ctx.product.id);
      return { params: { id: (await makeLicense(ctx.t.deps, { productId: ctx.product.id, planId: plan.id })).license.id } };
    },
  },
} satisfies RouteFixtures;
