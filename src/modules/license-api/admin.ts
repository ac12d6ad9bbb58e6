// Admin routes around the public license API: usage counters, floating sessions, activation removal.
import { Elysia } from "elysia";
import type { Deps } from "../../deps";
import type { AdminGuard } from "../../http/auth";
import { activationAdminRoutes } from "../activations/admin";
import { usageAdminRoutes } from "../usage/admin";
import { floatingAdminRoutes } from "../floating/admin";

export function licenseApiAdminRoutes(deps: Deps, guard: AdminGuard) {
  return new Elysia({ name: "keyward/license-api/admin" })
    .use(activationAdminRoutes(deps, guard))
    .use(usageAdminRoutes(deps, guard))
    .use(floatingAdminRoutes(deps, guard));
}
