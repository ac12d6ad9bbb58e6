import type { RouteFixtures } from "./types";
import { makePlan } from "../factories";

// Plan reads are open to licenses:write keys (they need plan ids to issue licenses); writes are admin only.
const READ = ["licenses:write"] as const;
const PDF = { name: "pdf", valueType: "bool" as const, value: "true", quotaLimit: null, quotaPeriod: null };

export default {
  "POST /api/v1/admin/plans": {
    scopes: [],
    build: ({ product }) => ({
      body: { product_id: product.id, name: "Fixture plan", license_type: "subscription", features: [{ name: "pdf", value_type: "bool", value: "true" }] },
    }),
  },
  "GET /api/v1/admin/plans": {
    scopes: [...READ],
    // The product_id filter is what a bound key on another product is refused on.
    build: ({ product }) => ({ query: { product_id: product.id } }),
  },
  "GET /api/v1/admin/plans/:id": {
    scopes: [...READ],
    build: async ({ t, product }) => ({ params: { id: (await makePlan(t.deps, product.id)).id } }),
  },
  "PATCH /api/v1/admin/plans/:id": {
    scopes: [],
    build: async ({ t, product }) => ({ params: { id: (await makePlan(t.deps, product.id)).id }, body: { name: "Renamed plan", max_activations: 5 } }),
  },
  "DELETE /api/v1/admin/plans/:id": {
    scopes: [],
    // A plan no license uses (a used plan is 409).
    build: async ({ t, product }) => ({ params: { id: (await makePlan(t.deps, product.id)).id } }),
  },
  "PUT /api/v1/admin/plans/:id/features/:name": {
    scopes: [],
    build: async ({ t, product }) => ({
      params: { id: (await makePlan(t.deps, product.id)).id, name: "sync" },
      body: { value_type: "quota", quota_limit: 100, quota_period: "daily" },
    }),
  },
  "DELETE /api/v1/admin/plans/:id/features/:name": {
    scopes: [],
    build: async ({ t, product }) => ({ params: { id: (await makePlan(t.deps, product.id, {}, [PDF])).id, name: "pdf" } }),
  },
} satisfies RouteFixtures;
