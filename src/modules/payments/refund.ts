// POST /admin/licenses/{id}/refund (spec: "refund via payment provider and revoke"; docs/payments.md
// "Refunds"). Refunds the license's last payment in full through Stripe, then revokes the license.
//
// Exactly one refund, however often and however concurrently the admin asks:
// 1. The payment is claimed first (refund_state null → "pending", one conditional write).
// 2. Stripe is called outside any transaction with the idempotency key `keyward-refund-<payment id>`.
//    A caller that finds the payment already "pending" (a concurrent request, or one cut off by a
//    crash or a lost answer) sends the same request with the same key: Stripe answers it with the
//    first request's refund instead of refunding again. After Stripe's 24-hour key window a re-sent
//    request is refused with `charge_already_refunded`, which is read as "refunded" too.
// 3. "refunded" (with the refund id) and the revoke are written in ONE transaction; only the caller
//    whose "pending" → "refunded" write takes revokes and writes the audit row, the others answer
//    with what it recorded.
// A definite refusal by Stripe (a 4xx) gives the claim back; no answer or a 5xx keeps it "pending",
// so the next request re-sends under the same key.
import { changeLicense } from "../licenses/change";
import type Stripe from "stripe";
import type { Deps, Repos } from "../../deps";
import type { Actor } from "../../shared/actor";
import { AppError } from "../../shared/errors";
import { diffChanges } from "../plans/changes";
import { licenseTransitioned } from "../licenses/events";
import { transition } from "../licenses/domain";
import { licenseAuditView } from "../licenses/present";
import { getLicense } from "../licenses/service";
import type { License, LicensePatch } from "../licenses/repo";
import type { Payment } from "./repo";
import { stripeFailure } from "./stripe-errors";

export interface RefundOutcome {
  license: License;
  /** The refunded payment as recorded. */
  payment: Payment;
  /** false when an earlier request had already recorded this refund (nothing was sent now). */
  refundedNow: boolean;
  /**
   * The license's Stripe subscription was canceled (true), could not be canceled now (false: retry
   * the refund route, it tries again), or there is none (null).
   */
  subscriptionCanceled: boolean | null;
}

export const refundIdempotencyKey = (paymentId: string) => `keyward-refund-${paymentId}`;

function notConfigured(): AppError {
  return new AppError("PAYMENTS_NOT_CONFIGURED", { message: "Refunds need Stripe: STRIPE_SECRET_KEY is not set." });
}

/** The PaymentIntent behind a payment: recorded for one-time payments, looked up for subscription invoices. */
async function paymentIntentOf(stripe: Stripe, payment: Payment): Promise<string | null> {
  if (payment.stripePaymentIntentId) return payment.stripePaymentIntentId;
  if (!payment.stripeInvoiceId) return null;
  // Invoices no longer carry `payment_intent` (API 2025-03-31 and later): their payments are listed
  // as invoice_payment objects.
  const list = await stripe.invoicePayments.list({ invoice: payment.stripeInvoiceId, limit: 10 });
  const paid = list.data.find((p) => p.status === "paid" && p.payment?.type === "payment_intent" && p.payment.payment_intent);
  const intent = paid?.payment.payment_intent;
  return intent ? (typeof intent === "string" ? intent : intent.id) : null;
}

/** The revoke half: revoked stays revoked (an admin may refund a license revoked earlier). */
export const revokePatch = (current: License): LicensePatch => (current.status === "revoked" ? {} : transition(current, "revoke"));

export async function refundLicense(deps: Deps, actor: Actor, licenseId: string): Promise<RefundOutcome> {
  const license = await getLicense(deps, actor, licenseId); // 404, or 403 for another product's bound key
  if (!deps.stripe) throw notConfigured();
  const stripe = await deps.stripe.sdk();
  // The newest payment with money in it: a $0 checkout (a 100 % coupon on a renewal) has nothing to
  // refund and must not hide the purchase before it.
  const last = (await deps.repos.payments.listPayments(license.id)).find((p) => p.amount !== 0);
  if (!last) throw new AppError("NOTHING_TO_REFUND", { message: "The license has no recorded payment to refund.", details: { license_id: license.id } });
  if (last.refundState === "refunded") return await replayed(deps, stripe, license.id, last.id);

  // Ours, or already "pending" from another request: either way the request below is the same one.
  if (last.refundState === null && !(await deps.repos.payments.claimRefund(last.id))) {
    const now = await findPayment(deps.repos, license.id, last.id);
    if (now.refundState === "refunded") return await replayed(deps, stripe, license.id, last.id);
    // Released by a request Stripe refused a moment ago: let the admin decide again.
    if (now.refundState === null) throw new AppError("CONFLICT", { message: "Another refund request for this payment just failed; retry.", details: { payment_id: last.id } });
  }

  let refundId: string | null;
  try {
    const intent = await paymentIntentOf(stripe, last);
    if (!intent) {
      await deps.repos.payments.releaseRefund(last.id);
      throw new AppError("REFUND_FAILED", {
        message: "Stripe has no paid PaymentIntent for this payment; refund it in the Stripe dashboard.",
        details: { payment_id: last.id, stripe_code: null },
      });
    }
    const refund = await stripe.refunds.create(
      { payment_intent: intent, metadata: { keyward_license_id: license.id, keyward_payment_id: last.id } },
      { idempotencyKey: refundIdempotencyKey(last.id) },
    );
    refundId = refund.id;
  } catch (e) {
    if (e instanceof AppError) throw e;
    const failure = stripeFailure(e);
    if (failure.code === "charge_already_refunded") {
      // Refunded already: by this route earlier (past Stripe's idempotency window) or in the dashboard.
      refundId = null;
    } else if (failure.definite) {
      await deps.repos.payments.releaseRefund(last.id);
      throw new AppError("REFUND_FAILED", {
        message: `Stripe refused the refund (${failure.message}). Nothing was refunded and the license is unchanged.`,
        details: { payment_id: last.id, stripe_status: failure.status, stripe_code: failure.code },
      });
    } else {
      deps.logger.warn("refund: no definite answer from Stripe; the payment stays pending", { payment_id: last.id, error: failure.message });
      throw new AppError("PAYMENT_PROVIDER_ERROR", {
        message: "Stripe did not confirm the refund. Retry: a retry cannot refund twice (same idempotency key).",
        details: { payment_id: last.id, stripe_status: failure.status },
      });
    }
  }

  const at = deps.clock.now();
  const revoked = await deps.db.transaction(async ({ repos }) => {
    if (!(await repos.payments.completeRefund(last.id, refundId, at))) return null; // another request recorded it
    return await changeLicense(repos, license.id, revokePatch, at, (before, patch) => ({
      audit: {
        actor,
        action: "license.refund",
        entityType: "license",
        entityId: before.id,
        productId: before.productId,
        changes: {
          ...diffChanges(licenseAuditView(before), licenseAuditView({ ...before, ...patch })),
          refund: { payment_id: last.id, stripe_refund_id: refundId, amount: last.amount, currency: last.currency },
        },
        at,
      },
      events: patch.status === "revoked" ? [licenseTransitioned("revoke", before, patch, at)] : [],
    }), { clearActivations: true });
    // The money has left at Stripe: the revocation that records it must not be lost to a power cut.
  }, { durable: true });
  if (!revoked) return await replayed(deps, stripe, license.id, last.id);
  return {
    license: revoked,
    payment: await findPayment(deps.repos, license.id, last.id),
    refundedNow: true,
    subscriptionCanceled: await cancelSubscription(deps, stripe, license.id),
  };
}

async function findPayment(repos: Pick<Repos, "payments">, licenseId: string, paymentId: string): Promise<Payment> {
  const payment = (await repos.payments.listPayments(licenseId)).find((p) => p.id === paymentId);
  if (!payment) throw new AppError("NOT_FOUND", { message: "License not found." }); // the license was deleted meanwhile
  return payment;
}

/** A refund recorded earlier: answer with it (and retry a subscription cancel that failed then). */
async function replayed(deps: Deps, stripe: Stripe, licenseId: string, paymentId: string): Promise<RefundOutcome> {
  const license = await deps.repos.licenses.findById(licenseId);
  if (!license) throw new AppError("NOT_FOUND", { message: "License not found." });
  return {
    license,
    payment: await findPayment(deps.repos, licenseId, paymentId),
    refundedNow: false,
    subscriptionCanceled: await cancelSubscription(deps, stripe, licenseId),
  };
}

/**
 * A refunded subscription must not bill the customer again: its Stripe subscription is canceled at
 * once (after the refund, outside any transaction). The billing link's status is left to the
 * customer.subscription.deleted webhook. Null without a subscription; false when Stripe did not
 * cancel it now (logged; the next refund request for this license tries again).
 */
async function cancelSubscription(deps: Deps, stripe: Stripe, licenseId: string): Promise<boolean | null> {
  const link = await deps.repos.payments.findLink(licenseId);
  const id = link?.stripeSubscriptionId;
  if (!id) return null;
  if (link.subscriptionStatus === "canceled" || link.subscriptionStatus === "incomplete_expired") return true;
  try {
    // The key makes a repeated cancel (a replayed refund request, a lost answer) one cancel at Stripe.
    await stripe.subscriptions.cancel(id, {}, { idempotencyKey: `keyward-cancel-${id}` });
    return true;
  } catch (e) {
    deps.logger.warn("refund: could not cancel the Stripe subscription", { license_id: licenseId, error: stripeFailure(e).message });
    return false;
  }
}
