// Stripe bookkeeping: processed event ids, the payments a license received, and the Stripe customer
// and subscription a license is billed through (docs/payments.md).

export type PaymentKind = "purchase" | "support_renewal" | "subscription";

export interface Payment {
  id: string;
  licenseId: string;
  kind: PaymentKind;
  stripeCheckoutSessionId: string | null;
  stripeInvoiceId: string | null;
  stripePaymentIntentId: string | null;
  /** Minor currency units as Stripe reports them; null when the event did not say. */
  amount: number | null;
  currency: string | null;
  paidAt: Date;
  /** null: not refunded; "pending": a refund call is under way (or was cut off); "refunded". */
  refundState: "pending" | "refunded" | null;
  stripeRefundId: string | null;
  refundedAt: Date | null;
  createdAt: Date;
  /**
   * The payment's chargeback: null: none; "open_suspended": open, and Keyward suspended the license
   * because of it (a won dispute reinstates it); "open": open, the license was left as it was
   * (already suspended by an admin, revoked, expired…); "won" / "lost": closed.
   */
  disputeStatus: DisputeStatus | null;
  /** Stripe's id (du_…) of the dispute disputeStatus describes. */
  stripeDisputeId: string | null;
}

export type DisputeStatus = "open" | "open_suspended" | "won" | "lost";

/** A payment as recorded when it is received: no dispute yet. */
export type NewPayment = Omit<Payment, "disputeStatus" | "stripeDisputeId"> & Partial<Pick<Payment, "disputeStatus" | "stripeDisputeId">>;

export interface BillingLink {
  licenseId: string;
  stripeCustomerId: string | null;
  stripeSubscriptionId: string | null;
  stripeCheckoutSessionId: string | null;
  /** Last Stripe subscription status seen (Stripe's own values); null without a subscription. */
  subscriptionStatus: string | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface PaymentRepo {
  /**
   * Records a Stripe event id as processed with `outcome`; false when it already was (the caller
   * must then change nothing). Use it inside DataStore.transaction with the event's effect, so the
   * record commits or rolls back with it: on PostgreSQL a concurrent claim of the same id waits for
   * the first transaction and then returns false; SQLite has one writer.
   */
  claimEvent(id: string, type: string, outcome: string, at: Date): Promise<boolean>;
  /** The outcome recorded for a processed event id, or null. */
  eventOutcome(id: string): Promise<string | null>;
  /** Replaces the outcome of a claimed event (in the claim's transaction, once the effect is known). */
  setEventOutcome(id: string, outcome: string): Promise<void>;
  /** Inserts a payment; false (nothing written) when one with the same checkout session or invoice id exists. */
  recordPayment(payment: NewPayment): Promise<boolean>;
  /** A license's payments, newest first (paid_at, then id). */
  listPayments(licenseId: string): Promise<Payment[]>;
  /**
   * The payment made through a Stripe PaymentIntent (disputes and charges name it), or null. Should
   * two payments name the same intent, the newest (paid_at, then id).
   */
  findPaymentByIntent(stripePaymentIntentId: string): Promise<Payment | null>;
  /** The payment of a subscription invoice (unique per invoice), or null. */
  findPaymentByInvoice(stripeInvoiceId: string): Promise<Payment | null>;
  /**
   * Records a dispute's state on a payment (the Stripe dispute handlers, under the license's row
   * lock: they read the payment, decide, then write). Returns false when the payment does not exist.
   */
  setDispute(paymentId: string, status: DisputeStatus, stripeDisputeId: string | null): Promise<boolean>;
  findLink(licenseId: string): Promise<BillingLink | null>;
  findLinkBySubscription(stripeSubscriptionId: string): Promise<BillingLink | null>;
  findLinkByCheckoutSession(stripeCheckoutSessionId: string): Promise<BillingLink | null>;
  /** Inserts or replaces the license's link (created_at kept on replace). */
  upsertLink(link: BillingLink): Promise<BillingLink>;
  /**
   * Claims a payment for a refund (POST /admin/licenses/{id}/refund): refund_state null → "pending"
   * in one conditional write; false when it was not null (a refund is under way, was cut off, or is
   * done). Only the claimer calls Stripe first; see refund.ts for what a later caller does.
   */
  claimRefund(paymentId: string): Promise<boolean>;
  /**
   * Records a refund Stripe made: → "refunded" with Stripe's refund id (null when Stripe said the
   * payment was already refunded and did not name the refund) and `at`, from "pending" (or null:
   * Stripe's answer wins over a claim given back meanwhile). False, with nothing written, when it
   * was already "refunded" (another caller recorded it first).
   */
  completeRefund(paymentId: string, stripeRefundId: string | null, at: Date): Promise<boolean>;
  /** Gives a claim back after Stripe definitely refused the refund: "pending" → null; false when it was not pending. */
  releaseRefund(paymentId: string): Promise<boolean>;
  /**
   * One batch of the prune-history pass: deletes up to `limit` processed Stripe event ids whose
   * processed_at is before `before`, by primary key, in one short statement; returns how many went.
   * Keyward's own claims (ids starting with `keyward:`, e.g. `keyward:purchase:<key>`, see
   * purchase.ts claimPurchaseIssue) are never deleted: they stay what keeps a purchase from being
   * issued twice, however late an event of that purchase arrives.
   */
  pruneEvents(before: Date, limit: number): Promise<number>;
}

/** Ids of claims Keyward makes itself in stripe_events (never pruned); Stripe's event ids start with `evt_`. */
export const KEYWARD_CLAIM_PREFIX = "keyward:";
