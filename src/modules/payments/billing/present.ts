// Wire views of a license's billing link and payments.
import type { BillingLink, Payment } from "../repo";
import { iso } from "../../../shared/clock";

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
    dispute_status: p.disputeStatus,
    stripe_dispute_id: p.stripeDisputeId,
  };
}

