import { Elysia } from "elysia";
import type { Deps } from "../../deps";
import type { AdminGuard } from "../../http/auth";
import { Envelope, errors, ok } from "../../http/envelope";
import { MeterSyncSchema } from "./model";
import { presentMeterSync } from "./present";
import { runMeteredSync } from "./service";

export function meteringAdminRoutes(deps: Deps, guard: AdminGuard) {
  return new Elysia({ name: "keyward/metering/admin" })
    .use(guard)
    .post("/admin/system/run-metered-sync", async ({ actor }) => ok(presentMeterSync(await runMeteredSync(deps, actor))), {
      scopes: ["admin"],
      response: { 200: Envelope(MeterSyncSchema), ...errors(401, 403, 503) },
      detail: {
        tags: ["Admin: system"],
        summary: "Drain the metered-billing queue to Stripe now",
        description:
          "Sends due queued usage of metered features (plan quota features with a `stripe_meter`) to Stripe as meter events, on this node, and returns what it did and which events it sent. The `metered-sync` job does the same every minute. Safe beside it or another node's run: queued events are claimed before they are sent, and each carries a stable `identifier` Stripe accepts once, so no usage is sent twice. Events Stripe fails on stay queued and are retried with backoff. 503 `PAYMENTS_NOT_CONFIGURED` without `STRIPE_SECRET_KEY`. See docs/payments.md (Metered billing).",
      },
    });
}
