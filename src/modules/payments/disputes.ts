// Chargebacks and refunds made in the Stripe dashboard (docs/payments.md "Disputes and refunds made
// in Stripe"). Each handler runs inside the webhook's transaction, after the event id was claimed:
// the license change, its audit row and event and the payment's dispute or refund state commit
// together or not at all, and no Stripe API call happens here.
//
// The payment is found by the PaymentIntent the dispute or charge names (payments.
// stripe_payment_intent_id: one-time purchases and support renewals). A subscription invoice's
// payment is recorded by its invoice, so for an intent Keyward does not know, `prepare` (before the
// transaction) asks Stripe which invoice the intent paid (GET /v1/invoice_payments?payment[…]).
// The license row is locked first (lockLicense) and the payment read again under that lock, so
// concurrent events of one license decide one after the other.
//
// - charge.dispute.created: a usable license is suspended, and the payment remembers that this
//   dispute suspended it ("open_suspended"); a license that was not usable (an admin suspended it,
//   it expired, was canceled or revoked) is left alone and the dispute is recorded as "open".
// - charge.dispute.closed: won (or an inquiry closed, warning_closed) reinstates the license only
//   when this dispute suspended it and it is still suspended; lost revokes it (the money is gone, as
//   with a refund).
// - charge.refunded: a full refund Keyward did not make (the dashboard, the API by another tool) is
//   recorded on the payment and revokes the license exactly as POST /admin/licenses/{id}/refund
//   does. A refund Keyward made, or is making, is already recorded; a partial refund changes nothing.
import { changeLicense } from "../licenses/change";
import { USABLE_STATUSES, transition } from "../licenses/domain";
import { licenseTransitioned } from "../licenses/events";
import { licenseAuditView } from "../licenses/present";
import type { License, LicensePatch } from "../licenses/repo";
import { diffChanges } from "../plans/changes";
import { lockLicense, type BillingEventContext } from "./billing-context";
import { revokePatch } from "./refund";
import type { Deps } from "../../deps";
import type Stripe from "stripe";
import type { StripeEventHandler } from "./event-context";
import type { Payment } from "./repo";
import { stripeFailure } from "./stripe-errors";
import { readCharge, readDispute, type DisputeView } from "./stripe-objects";

export const UNKNOWN_PAYMENT = "ignored_unknown_payment";

/** What `prepare` found: the subscription invoice an unknown PaymentIntent paid, or null. */
interface Prepared {
  invoiceId: string | null;
}

/**
 * Before the transaction: for a PaymentIntent no payment names, the invoice it paid (subscription
 * invoices are recorded by invoice). A Stripe outage throws (the webhook answers 5xx and Stripe
 * redelivers); a refusal that a retry cannot fix reads as "no invoice".
 */
async function invoiceOfIntent(deps: Deps, paymentIntentId: string | null): Promise<Prepared> {
  if (!paymentIntentId || !deps.stripe) return { invoiceId: null };
  if (await deps.repos.payments.findPaymentByIntent(paymentIntentId)) return { invoiceId: null };
  try {
    const list = await (await deps.stripe.sdk()).invoicePayments.list({ payment: { type: "payment_intent", payment_intent: paymentIntentId }, limit: 1 });
    const invoice = list.data[0]?.invoice;
    return { invoiceId: typeof invoice === "string" ? invoice : (invoice?.id ?? null) };
  } catch (e) {
    const failure = stripeFailure(e);
    // Only "no such payment" answers mean no invoice; a rejected key (401/403) or a rate limit must
    // not turn the event into a permanent ignored_unknown_payment: throw, and Stripe redelivers.
    if (failure.status === 400 || failure.status === 404) {
      deps.logger.warn("stripe webhook: could not look up the invoice of a PaymentIntent", { error: failure.message });
      return { invoiceId: null };
    }
    throw e;
  }
}

/** The payment the PaymentIntent paid, with its license locked; or the outcome to return. */
async function lockedPayment(ctx: BillingEventContext, paymentIntentId: string | null): Promise<{ payment: Payment; license: License } | string> {
  if (!paymentIntentId) return UNKNOWN_PAYMENT;
  const invoiceId = (ctx.prepared as Prepared | undefined)?.invoiceId ?? null;
  const found = (await ctx.tx.repos.payments.findPaymentByIntent(paymentIntentId)) ?? (invoiceId ? await ctx.tx.repos.payments.findPaymentByInvoice(invoiceId) : null);
  if (!found) return UNKNOWN_PAYMENT;
  const license = await lockLicense(ctx, found.licenseId);
  if (!license) return "ignored_license_missing";
  // Read again under the license's lock: another event of this license may have changed it meanwhile.
  const payment = (await ctx.tx.repos.payments.listPayments(found.licenseId)).find((p) => p.id === found.id);
  if (!payment) return UNKNOWN_PAYMENT;
  return { payment, license };
}

const disputeDetails = (payment: Payment, dispute: DisputeView) => ({
  payment_id: payment.id,
  stripe_dispute_id: dispute.id,
  stripe_charge_id: dispute.chargeId,
  status: dispute.status,
  reason: dispute.reason,
  amount: dispute.amount,
  currency: payment.currency,
});

/**
 * Applies a license transition caused by a dispute or a refund, with its audit row and event.
 * `decide` returns the patch ({} for none); no audit row or event when nothing changed.
 */
async function transitionLicense(
  ctx: BillingEventContext,
  licenseId: string,
  action: string,
  decide: (current: License) => { patch: LicensePatch; transition: "suspend" | "reinstate" | "revoke" | null },
  details: Record<string, unknown>,
  opts: { clearActivations?: boolean; auditUnchanged?: boolean } = {},
): Promise<boolean> {
  let changed = false;
  let kind: "suspend" | "reinstate" | "revoke" | null = null;
  await changeLicense(
    ctx.tx.repos,
    licenseId,
    (current) => {
      const decided = decide(current);
      kind = decided.transition;
      return decided.patch;
    },
    ctx.at,
    (before, patch) => {
      changed = kind !== null && patch.status !== undefined && patch.status !== before.status;
      if (!changed && !opts.auditUnchanged) return {};
      return {
        audit: {
          actor: ctx.actor,
          action,
          entityType: "license",
          entityId: before.id,
          productId: before.productId,
          changes: { ...diffChanges(licenseAuditView(before), licenseAuditView({ ...before, ...patch })), ...details },
          at: ctx.at,
        },
        events: changed && kind ? [licenseTransitioned(kind, before, patch, ctx.at)] : [],
      };
    },
    { clearActivations: opts.clearActivations ?? false },
  );
  return changed;
}

/**
 * charge.dispute.created. Outcomes: suspended; dispute_recorded (the license was not usable and is
 * left as it is: suspended by an admin, expired, canceled, revoked); ignored_already_open (this
 * dispute is recorded already); ignored_already_closed (its close arrived first: nothing to
 * suspend for); ignored_unknown_payment; ignored_malformed.
 */
export async function disputeCreated(ctx: BillingEventContext): Promise<string> {
  const dispute = readDispute(ctx.event.data.object);
  if (!dispute) return "ignored_malformed";
  const found = await lockedPayment(ctx, dispute.paymentIntentId);
  if (typeof found === "string") return found;
  const { payment, license } = found;
  const open = payment.disputeStatus === "open" || payment.disputeStatus === "open_suspended";
  if (open && (payment.stripeDisputeId === dispute.id || payment.stripeDisputeId === null)) return "ignored_already_open";
  // Stripe does not order events: the dispute's close may have arrived first. It stays closed.
  if (!open && payment.disputeStatus !== null && payment.stripeDisputeId === dispute.id) return "ignored_already_closed";
  if (open) {
    // Another dispute of the same payment while one is open: the license stays as the first left it.
    await ctx.tx.repos.payments.setDispute(payment.id, payment.disputeStatus!, dispute.id);
    return "dispute_recorded";
  }
  const suspended =
    license.status !== "revoked" &&
    (await transitionLicense(
      ctx,
      license.id,
      "license.dispute_suspend",
      (current) => (USABLE_STATUSES.includes(current.status) ? { patch: transition(current, "suspend"), transition: "suspend" } : { patch: {}, transition: null }),
      { dispute: disputeDetails(payment, dispute) },
    ));
  await ctx.tx.repos.payments.setDispute(payment.id, suspended ? "open_suspended" : "open", dispute.id);
  return suspended ? "suspended" : "dispute_recorded";
}

/**
 * charge.dispute.closed. Outcomes: reinstated (won / warning_closed, and this dispute had suspended
 * the license); dispute_won (the license is left as it is: not suspended by this dispute, or no
 * longer suspended); revoked (lost); dispute_lost (lost, the license was revoked already);
 * ignored_already_closed; ignored_dispute_status (a status that is not a closed one);
 * ignored_unknown_payment; ignored_malformed.
 */
export async function disputeClosed(ctx: BillingEventContext): Promise<string> {
  const dispute = readDispute(ctx.event.data.object);
  if (!dispute) return "ignored_malformed";
  const won = dispute.status === "won" || dispute.status === "warning_closed";
  if (!won && dispute.status !== "lost") return "ignored_dispute_status";
  const found = await lockedPayment(ctx, dispute.paymentIntentId);
  if (typeof found === "string") return found;
  const { payment, license } = found;
  const same = payment.stripeDisputeId === null || payment.stripeDisputeId === dispute.id;
  if (same && (payment.disputeStatus === "won" || payment.disputeStatus === "lost")) return "ignored_already_closed";
  const details = { dispute: disputeDetails(payment, dispute) };

  if (won) {
    // Only a suspension this dispute made is lifted: an admin's own suspension stays.
    const ours = same && payment.disputeStatus === "open_suspended";
    await ctx.tx.repos.payments.setDispute(payment.id, "won", dispute.id);
    if (!ours || license.status !== "suspended") return "dispute_won";
    const reinstated = await transitionLicense(
      ctx,
      license.id,
      "license.dispute_reinstate",
      (current) => (current.status === "suspended" ? { patch: transition(current, "reinstate"), transition: "reinstate" } : { patch: {}, transition: null }),
      details,
    );
    return reinstated ? "reinstated" : "dispute_won";
  }

  await ctx.tx.repos.payments.setDispute(payment.id, "lost", dispute.id);
  if (license.status === "revoked") return "dispute_lost";
  await transitionLicense(ctx, license.id, "license.dispute_revoke", (current) => ({ patch: revokePatch(current), transition: "revoke" }), details, {
    clearActivations: true,
  });
  return "revoked";
}

/**
 * charge.refunded. Outcomes: refunded (a full refund Keyward had not recorded: recorded now, the
 * license revoked as the refund route would); already_recorded (Keyward made this refund, or is
 * making it: the refund route records it and revokes); ignored_partial_refund (the license stays);
 * ignored_unknown_payment; ignored_malformed.
 */
export async function chargeRefunded(ctx: BillingEventContext): Promise<string> {
  const charge = readCharge(ctx.event.data.object);
  if (!charge) return "ignored_malformed";
  const found = await lockedPayment(ctx, charge.paymentIntentId);
  if (typeof found === "string") return found;
  const { payment, license } = found;
  if (payment.refundState !== null) return "already_recorded";
  if (!charge.refunded) return "ignored_partial_refund";
  if (!(await ctx.tx.repos.payments.completeRefund(payment.id, charge.latestRefundId, ctx.at))) return "already_recorded";
  // The same revoke, audit action and event as POST /admin/licenses/{id}/refund (refund.ts).
  await transitionLicense(
    ctx,
    license.id,
    "license.refund",
    (current) => ({ patch: revokePatch(current), transition: current.status === "revoked" ? null : "revoke" }),
    {
      refund: {
        payment_id: payment.id,
        stripe_refund_id: charge.latestRefundId,
        amount: payment.amount,
        currency: payment.currency,
        stripe_charge_id: charge.id,
        amount_refunded: charge.amountRefunded,
        source: "stripe",
      },
    },
    { clearActivations: true, auditUnchanged: true },
  );
  return "refunded";
}

const intentOfDispute = (event: Stripe.Event) => readDispute(event.data.object)?.paymentIntentId ?? null;
const intentOfCharge = (event: Stripe.Event) => readCharge(event.data.object)?.paymentIntentId ?? null;

/** The Stripe event types this module handles, for the dispatcher's registry (handlers.ts). */
export const DISPUTE_HANDLERS: Record<string, StripeEventHandler<Prepared>> = {
  "charge.dispute.created": { prepare: ({ deps, event }) => invoiceOfIntent(deps, intentOfDispute(event)), apply: disputeCreated },
  "charge.dispute.closed": { prepare: ({ deps, event }) => invoiceOfIntent(deps, intentOfDispute(event)), apply: disputeClosed },
  "charge.refunded": { prepare: ({ deps, event }) => invoiceOfIntent(deps, intentOfCharge(event)), apply: chargeRefunded },
};
