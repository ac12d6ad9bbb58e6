import { Elysia } from "elysia";
import type { Deps } from "../../deps";
import { Envelope, errors, ok } from "../../http/envelope";
import { getEntitlements } from "./service";
import { EntitlementsBody, EntitlementsResponse } from "./model";
import { presentEntitlements } from "./present";

export function entitlementRoutes(deps: Deps) {
  return new Elysia({ name: "keyward/entitlements" }).post(
    "/license/entitlements",
    async ({ body }) => ok(presentEntitlements(await getEntitlements(deps, { licenseKey: body.license_key, productId: body.product_id, feature: body.feature }))),
    {
      body: EntitlementsBody,
      response: { 200: Envelope(EntitlementsResponse), ...errors(404) },
      detail: {
        tags: ["License"],
        summary: "Feature entitlements of a license (plan and add-ons), with quota counters; no token",
        description: "Unknown, malformed, other-product or unusable keys all answer the same 404 LICENSE_NOT_FOUND as verify.",
      },
    },
  );
}
