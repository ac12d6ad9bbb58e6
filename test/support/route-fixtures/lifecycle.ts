import type { RouteFixtures } from "./types";

// The lifecycle pass and its email templates span every product: system-wide and admin only.
export default {
  "POST /api/v1/admin/system/run-expiry-checks": {
    scopes: [],
    productScoped: false,
    build: () => ({}),
  },
  "GET /api/v1/admin/email-templates": {
    scopes: [],
    productScoped: false,
    build: () => ({}),
  },
  "PUT /api/v1/admin/email-templates/:name": {
    scopes: [],
    productScoped: false,
    build: () => ({ params: { name: "expiry_reminder" }, body: { subject: "{{product_name}} ends in {{days_left}}", body: "Renew {{product_name}}." } }),
  },
  "DELETE /api/v1/admin/email-templates/:name": {
    scopes: [],
    productScoped: false,
    build: () => ({ params: { name: "expiry_reminder" } }),
  },
  "POST /api/v1/admin/email-templates/:name/preview": {
    scopes: [],
    productScoped: false,
    build: () => ({ params: { name: "dunning" }, body: { data: { product_name: "Acme" } } }),
  },
} satisfies RouteFixtures;
