import { table, text, integer, index, uniqueIndex, primaryKey, ts, bigint, byteOrder } from "../dialect/sqlite";
import { licenses } from "./licenses";

/**
 * Stripe events already processed (POST /webhooks/stripe): the row is inserted in the same transaction
 * as the event's effect, so a redelivery, or the same event reaching two nodes at once, acts once.
 */
export const stripeEvents = table(
  "stripe_events",
  {
    id: text("id").primaryKey(),
    type: text("type").notNull(),
    /** What processing did: "renewed", "issued", "ignored", … (docs/payments.md). */
    outcome: text("outcome").notNull(),
    processedAt: ts("processed_at").notNull(),
  },
  (t) => [index("stripe_events_processed_idx").on(t.processedAt)],
);

/** The Stripe customer and subscription a license is billed through (one row per license). */
export const billingLinks = table(
  "billing_links",
  {
    licenseId: text("license_id")
      .primaryKey()
      .references(() => licenses.id, { onDelete: "cascade" }),
    stripeCustomerId: text("stripe_customer_id"),
    stripeSubscriptionId: text("stripe_subscription_id"),
    /** The Checkout Session that bought the license (purchases); null when linked otherwise. */
    stripeCheckoutSessionId: text("stripe_checkout_session_id"),
    /** Last Stripe subscription status seen (Stripe's own values). */
    subscriptionStatus: text("subscription_status"),
    createdAt: ts("created_at").notNull(),
    updatedAt: ts("updated_at").notNull(),
  },
  (t) => [
    uniqueIndex("billing_links_subscription_uq").on(t.stripeSubscriptionId),
    uniqueIndex("billing_links_checkout_uq").on(t.stripeCheckoutSessionId),
    index("billing_links_customer_idx").on(t.stripeCustomerId),
    // The lifecycle pass's catch-up walk: a subscription status changed since its last pass (a
    // license that no longer renews by itself is due its expiry reminder).
    index("billing_links_updated_idx").on(t.updatedAt, byteOrder(t.licenseId)),
  ],
);

/** Payments received for a license (purchase, support renewal, subscription invoice); the refund route refunds the last one. */
export const payments = table(
  "payments",
  {
    id: text("id").primaryKey(),
    licenseId: text("license_id")
      .notNull()
      .references(() => licenses.id, { onDelete: "cascade" }),
    kind: text("kind", { enum: ["purchase", "support_renewal", "subscription"] }).notNull(),
    stripeCheckoutSessionId: text("stripe_checkout_session_id"),
    stripeInvoiceId: text("stripe_invoice_id"),
    stripePaymentIntentId: text("stripe_payment_intent_id"),
    /** Minor currency units as Stripe reports them; null when the event did not say. */
    amount: bigint("amount"),
    currency: text("currency"),
    paidAt: ts("paid_at").notNull(),
    /** null: not refunded; "pending": a refund call is under way (or was cut off); "refunded". */
    refundState: text("refund_state", { enum: ["pending", "refunded"] }),
    stripeRefundId: text("stripe_refund_id"),
    refundedAt: ts("refunded_at"),
    createdAt: ts("created_at").notNull(),
    /**
     * The payment's chargeback (docs/payments.md "Disputes and refunds made in Stripe"): null: none;
     * "open_suspended": open, and the license was suspended because of it; "open": open, the license
     * was left as it was (already suspended, revoked, expired…); "won" / "lost": closed.
     */
    disputeStatus: text("dispute_status", { enum: ["open", "open_suspended", "won", "lost"] }),
    /** Stripe's dispute id (du_…) of the last dispute seen for this payment. */
    stripeDisputeId: text("stripe_dispute_id"),
  },
  (t) => [
    uniqueIndex("payments_checkout_uq").on(t.stripeCheckoutSessionId),
    uniqueIndex("payments_invoice_uq").on(t.stripeInvoiceId),
    // GET /admin/licenses/:id/billing: a license's payments newest first, without a sort.
    index("payments_license_idx").on(t.licenseId, t.paidAt, byteOrder(t.id)),
    // Disputes and charge events name the PaymentIntent.
    index("payments_payment_intent_idx").on(t.stripePaymentIntentId),
  ],
);

/**
 * Usage to report to Stripe meters: one row per accepted usage report of a feature with a
 * `stripe_meter`, written in the usage write's transaction; the metered-sync pass drains it.
 */
export const meterQueue = table(
  "meter_queue",
  {
    /** Also the meter event's `identifier` at Stripe (deduplicated there too). */
    id: text("id").primaryKey(),
    licenseId: text("license_id")
      .notNull()
      .references(() => licenses.id, { onDelete: "cascade" }),
    feature: text("feature").notNull(),
    eventName: text("event_name").notNull(),
    quantity: bigint("quantity").notNull(),
    occurredAt: ts("occurred_at").notNull(),
    status: text("status", { enum: ["pending", "sent", "skipped"] }).notNull(),
    attempts: integer("attempts").notNull().default(0),
    nextAttemptAt: ts("next_attempt_at").notNull(),
    lastError: text("last_error"),
    sentAt: ts("sent_at"),
  },
  // The metered-billing sync's claim: due pending rows in (next_attempt_at, id) order, LIMIT.
  (t) => [index("meter_queue_due_idx").on(t.status, t.nextAttemptAt, t.id), index("meter_queue_license_idx").on(t.licenseId)],
);
