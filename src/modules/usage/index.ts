import { Elysia } from "elysia";
import type { Deps } from "../../deps";
import { Envelope, errors, ok } from "../../http/envelope";
import { idempotent } from "../../http/idempotency";
import { recordUsage, usageStatus, type UsageView } from "./service";
import { UsageBody, UsageResponse, UsageStatusBody, UsageStatusResponse } from "./model";
import { presentUsage, presentUsageStatus } from "./present";

export function usageRoutes(deps: Deps) {
  return new Elysia({ name: "keyward/usage" })
    .post(
      "/license/usage",
      async ({ body, request }) =>
        idempotent(
          deps,
          request,
          "license.usage",
          body.license_key,
          (record) =>
            recordUsage(
              deps,
              {
                licenseKey: body.license_key,
                productId: body.product_id,
                feature: body.feature,
                quantity: body.quantity ?? 1,
                metadata: body.metadata,
              },
              record,
            ),
          (view: UsageView) => ok(presentUsage(view)),
        ),
      {
        body: UsageBody,
        response: { 200: Envelope(UsageResponse), ...errors(404, 409, 422, 429) },
        detail: {
          tags: ["License"],
          summary: "Record metered usage against a quota (atomic; never exceeds the limit)",
          description:
            "429 QUOTA_EXCEEDED with details {used, limit, period} when the quantity does not fit. 400 VALIDATION_ERROR when the feature is not a quota of the license. Honors Idempotency-Key.",
        },
      },
    )
    .post(
      "/license/usage/status",
      async ({ body }) => ok(presentUsageStatus(await usageStatus(deps, { licenseKey: body.license_key, productId: body.product_id, feature: body.feature }))),
      {
        body: UsageStatusBody,
        response: { 200: Envelope(UsageStatusResponse), ...errors(404) },
        detail: { tags: ["License"], summary: "Current counter of a quota feature (does not consume)" },
      },
    );
}
