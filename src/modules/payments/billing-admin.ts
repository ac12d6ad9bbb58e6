// GET /admin/licenses/{id}/billing: how a license is billed through Stripe (its billing link) and the
// payments it received, newest first (docs/admin-api.md, "Billing").
import { Elysia } from "elysia";
import { t } from "../../http/schema";
import type { Deps } from "../../deps";
import type { AdminGuard } from "../../http/auth";
import { Envelope, errors, ok } from "../../http/envelope";
import type { Actor } from "../../shared/actor";
import { DateTime, Uuid } from "../license-api/model";
import { getLicense } from "../licenses/service";
import type { BillingLink, Payment } from "./repo";

const Nullable = <S extends Parameters<typeof t.Union>[0][number]>(s: S, description?: string) => t.Union([s, t.Null()], description ? { description } : {});

export const BillingLinkSchema = t.Object(
  {
    stripe_customer_id: Nullable(t.String()),
    stripe_subscription_id: Nullable(t.String(), "null for a one-time purchase"),
    stripe_checkout_session_id: Nullable(t.String(), "The Checkout Session that bought the license"),
    subscription_status: Nullable(t.String(), "The last Stripe subscription status seen (Stripe's own value: trialing, active, past_due, unpaid, canceled, …)"),
    created_at: DateTime,
    updated_at: t.String({ format: "date-time", description: "Stripe's time of the last event applied to the license (later events older than it do not change its status)" }),
  },
  { title: "BillingLink" },
);

export const PaymentSchema = t.Object(
  {
    id: Uuid,
    kind: t.Union([t.Literal("purchase"), t.Literal("support_renewal"), t.Literal("subscription")], {
      description: "purchase: the checkout that bought the license (for a subscription, its first invoice); subscription: a later invoice; support_renewal: a paid support renewal",
    }),
    stripe_checkout_session_id: Nullable(t.String()),
    stripe_invoice_id: Nullable(t.String()),
    stripe_payment_intent_id: Nullable(t.String()),
    amount: Nullable(t.Integer(), "Minor currency units as Stripe reported them"),
    currency: Nullable(t.String()),
    paid_at: DateTime,
    refund_state: t.Union([t.Literal("pending"), t.Literal("refunded"), t.Null()], { description: "null: not refunded; pending: a refund call is under way" }),
    stripe_refund_id: Nullable(t.String()),
    refunded_at: Nullable(DateTime),
  },
  { title: "Payment" },
);

export const LicenseBillingSchema = t.Object(
  {
    license_id: Uuid,
    link: Nullable(BillingLinkSchema, "null when the license was not sold through Stripe"),
    payments: t.Array(PaymentSchema, { description: "Newest first" }),
  },
  { title: "LicenseBilling" },
);

const iso = (d: Date | null) => (d ? d.toISOString() : null);

export function presentBillingLink(l: BillingLink) {
  return {
    stripe_customer_id: l.stripeCustomerId,
    stripe_subscription_id: l.stripeSubscriptionId,
    stripe_checkout_session_id: l.stripeCheckoutSessionId,
    subscription_status: l.subscriptionStatus,
    created_at: l.createdAt.toISOString(),
    updated_at: l.updatedAt.toISOString(),
  };
}

export function presentPayment(p: Payment) {
  return {
    id: p.id,
    kind: p.kind,
    stripe_checkout_session_id: p.stripeCheckoutSessionId,
    stripe_invoice_id: p.stripeInvoiceId,
    stripe_payment_intent_id: p.stripePaymentIntentId,
    amount: p.amount,
    currency: p.currency,
    paid_at: p.paidAt.toISOString(),
    refund_state: p.refundState,
    stripe_refund_id: p.stripeRefundId,
    refunded_at: iso(p.refundedAt),
  };
}

export interface LicenseBilling {
  licenseId: string;
  link: BillingLink | null;
  payments: Payment[];
}

/** 404 NOT_FOUND / 403 PRODUCT_SCOPE_MISMATCH as the other license routes. */
export async function getLicenseBilling(deps: Deps, actor: Actor, licenseId: string): Promise<LicenseBilling> {
  const license = await getLicense(deps, actor, licenseId);
  const [link, payments] = await Promise.all([deps.repos.payments.findLink(license.id), deps.repos.payments.listPayments(license.id)]);
  return { licenseId: license.id, link, payments };
}

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
