import type { RouteFixtures } from "./types";
import { randomUUID } from "node:crypto";
import { signIn } from "../../../src/modules/sessions/service";

// Users and sessions are system-wide: admin only (reads also `read`), never a product-bound key.
const freshUser = async (t: import("../app").TestApp) =>
  (await t.deps.db.transaction((tx) => signIn(tx, { email: `u-${randomUUID()}@example.com`, method: "dev", ip: null, userAgent: null }))).user;

export default {
  "GET /api/v1/admin/users": { scopes: [], productScoped: false, build: () => ({ query: { limit: "5" } }) },
  "POST /api/v1/admin/users": {
    scopes: [],
    productScoped: false,
    build: () => ({ body: { email: `staff-${randomUUID()}@example.com`, role: "viewer" } }),
  },
  "GET /api/v1/admin/users/:id": { scopes: [], productScoped: false, build: async ({ t }) => ({ params: { id: (await freshUser(t)).id } }) },
  "POST /api/v1/admin/users/:id/role": {
    scopes: [],
    productScoped: false,
    build: async ({ t }) => ({ params: { id: (await freshUser(t)).id }, body: { role: "support" } }),
  },
  "DELETE /api/v1/admin/users/:id": { scopes: [], productScoped: false, build: async ({ t }) => ({ params: { id: (await freshUser(t)).id } }) },
  "POST /api/v1/admin/users/:id/sign-out": {
    scopes: [],
    productScoped: false,
    build: async ({ t }) => ({ params: { id: (await freshUser(t)).id } }),
  },
  "GET /api/v1/admin/sessions": { scopes: [], productScoped: false, build: () => ({ query: { limit: "5" } }) },
  "POST /api/v1/admin/sessions/:id/revoke": {
    scopes: [],
    productScoped: false,
    build: async ({ t }) => {
      const { session } = await t.deps.db.transaction((tx) => signIn(tx, { email: `s-${randomUUID()}@example.com`, method: "dev", ip: null, userAgent: null }));
      return { params: { id: session.id } };
    },
  },
} satisfies RouteFixtures;
