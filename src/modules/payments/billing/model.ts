// Schemas of the billing view (GET /admin/licenses/{id}/billing, admin.ts).
import { t } from "../../../http/schema";
import { DateTime, Uuid } from "../../license-api/model";

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
    dispute_status: t.Union([t.Literal("open"), t.Literal("open_suspended"), t.Literal("won"), t.Literal("lost"), t.Null()], {
      description:
        "The payment's chargeback: null: none; open_suspended: open, and Keyward suspended the license because of it; open: open, the license was left as it was; won / lost: closed",
    }),
    stripe_dispute_id: Nullable(t.String()),
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

