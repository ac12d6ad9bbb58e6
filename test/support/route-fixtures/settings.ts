import type { RouteFixtures } from "./types";

// Settings are system-wide and admin only: no other scope, and no product-bound key.
export default {
  "GET /api/v1/admin/settings": {
    scopes: [],
    productScoped: false,
    build: () => ({}),
  },
  "PATCH /api/v1/admin/settings": {
    scopes: [],
    productScoped: false,
    build: () => ({ body: { vendor_name: "Fixture Vendor", expiry_reminder_days: [14, 7, 1] } }),
  },
} satisfies RouteFixtures;
