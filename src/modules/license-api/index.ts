// The public license API (spec: "License (public, no credential header; license_key in body)"),
// composed from its feature modules so app.ts mounts it with one line.
import { Elysia } from "elysia";
import type { Deps } from "../../deps";
import { activationRoutes } from "../activations";
import { entitlementRoutes } from "../entitlements";
import { usageRoutes } from "../usage";
import { floatingRoutes } from "../floating";

export function licenseApiRoutes(deps: Deps) {
  return new Elysia({ name: "keyward/license-api" })
    .use(activationRoutes(deps))
    .use(entitlementRoutes(deps))
    .use(usageRoutes(deps))
    .use(floatingRoutes(deps));
}
