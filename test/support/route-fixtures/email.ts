import type { RouteFixtures } from "./types";

// The email outbox spans every product (sign-in codes, invites): system-wide and admin only.
export default {
  "GET /api/v1/admin/emails": {
    scopes: [],
    productScoped: false,
    build: () => ({ query: { status: "pending", template: "sign_in_code", to: "someone@example.com", limit: "10" } }),
  },
} satisfies RouteFixtures;
