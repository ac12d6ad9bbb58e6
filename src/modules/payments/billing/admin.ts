// GET /admin/licenses/{id}/billing (docs/admin-api.md, "Billing").
import { Elysia } from "elysia";
import type { Deps } from "../../../deps";
import type { AdminGuard } from "../../../http/auth";
import { Envelope, errors, ok } from "../../../http/envelope";
import { t } from "../../../http/schema";
import { Uuid } from "../../license-api/model";
import { LicenseBillingSchema } from "./model";
import { presentBillingLink, presentPayment } from "./present";
import { getLicenseBilling } from "./service";

export function billingAdminRoutes(deps: Deps, guard: AdminGuard) {
  return new Elysia({ name: "keyward/payments/billing-admin" })
    .use(guard)
    .get(
      "/admin/licenses/:id/billing",
      async ({ actor, params }) => {
        const b = await getLicenseBilling(deps, actor, params.id);
        return ok({ license_id: b.licenseId, link: b.link ? presentBillingLink(b.link) : null, payments: b.payments.map(presentPayment) });
      },
      {
        scopes: ["licenses:write"],
        params: t.Object({ id: Uuid }),
        response: { 200: Envelope(LicenseBillingSchema), ...errors(401, 403, 404) },
        detail: {
          tags: ["Admin: licenses"],
          summary: "Billing of a license: its Stripe link and payments",
          description:
            "The Stripe customer, subscription and Checkout Session the license is billed through (null when it was not sold through Stripe), the last subscription status Stripe reported, and every payment recorded for it (purchase, subscription invoices, support renewals), newest first, with its refund state. Read-only; accepts the read scope.",
        },
      },
    );
}
