// Subscription events keep a sold license's status and valid_until in step with Stripe
// (docs/payments.md, "Subscriptions"). Each handler runs inside the webhook's transaction, after the
// event id was claimed: the license change, its audit row and event, the payment record and the
// billing link commit together or not at all, and no Stripe API call happens here.
//
// Order: Stripe sends checkout.session.completed, customer.subscription.created and invoice.paid for
// one purchase in any order (and retries reorder them further). So:
// - whichever of them arrives first for a subscription Keyward sold (its metadata says
//   keyward_kind=purchase) issues the license (purchase.ts issuePurchasedLicense), and the others
//   find it through the billing link (unique per subscription);
// - valid_until only ever moves forward (max of the current value and the period end the event
//   states), so applying period ends in any order ends at the latest one;
// - a status change applies only when the event is not older than the last one applied (the
//   billing link's updated_at holds the Stripe time of that event), so a late event does not undo a
//   newer state. Stripe times are whole seconds: events of the same second all apply, in arrival order.
import { changeLicense } from "../licenses/change";
import { newId } from "../../shared/ids";
import { billingStatusOf, billingTransition, type BillingStatus } from "../licenses/domain";
import { licenseBillingUpdated, licenseCanceled, licenseRenewed } from "../licenses/events";
import { licenseAuditView } from "../licenses/present";
import type { License, LicensePatch } from "../licenses/repo";
import type { OutboxEvent } from "../outbox/effects";
import { diffChanges } from "../plans/changes";
import type { BillingLink } from "./repo";
import { claimPurchaseIssue, issuePurchasedLicense } from "./purchase";
import { eventTime, lockLicense, type BillingEventContext } from "./billing-context";
import { purchaseMetadata, readInvoice, readSubscription } from "./stripe-objects";

export const UNKNOWN_SUBSCRIPTION = "ignored_unknown_subscription";

interface BillingChange {
  /** The status the event drives, decided on the locked license row; null: none. */
  to: (license: License) => BillingStatus | null;
  /** A period end the license is paid (or in trial) until: valid_until becomes the later of the two. */
  paidUntil: Date | null;
  /** A paid subscription_cycle invoice (event license.renewed when it extends valid_until). */
  renewal: boolean;
  /** The Stripe subscription status to record on the link (subscription events); undefined: keep. */
  subscriptionStatus?: string | null;
  /** subscriptionStatus is what an invoice implies, not Stripe's word: it never replaces "canceled" (final at Stripe). */
  statusInferred?: boolean;
  /** Audit action. */
  action: string;
}

/**
 * Applies one event's state to a linked license: locks the license row (so concurrent events of one
 * subscription on PostgreSQL decide one after the other), skips the status part of a stale event,
 * writes the patch with its audit row and event, and advances the link. Returns the outcome.
 */
async function applyBilling(ctx: BillingEventContext, link: BillingLink, change: BillingChange): Promise<string> {
  const { tx: { repos }, at } = ctx;
  const stamp = eventTime(ctx);
  // The license row lock first (lockLicense); the link is read after it.
  const locked = await lockLicense(ctx, link.licenseId);
  if (!locked) return "ignored_license_missing";
  const current = (await repos.payments.findLink(link.licenseId)) ?? link;
  const stale = stamp.getTime() < current.updatedAt.getTime();
  await repos.payments.upsertLink({
    ...current,
    subscriptionStatus:
      change.subscriptionStatus !== undefined && !stale && !(change.statusInferred && current.subscriptionStatus === "canceled")
        ? change.subscriptionStatus
        : current.subscriptionStatus,
    updatedAt: stale ? current.updatedAt : stamp,
  });
  // Admin decisions win: a revoked license keeps everything; only the link records what Stripe said.
  if (locked.status === "revoked") return "ignored_revoked";

  let outcome = stale ? "ignored_stale" : "unchanged";
  await changeLicense(
    repos,
    locked.id,
    (license) => {
      const patch: LicensePatch = {};
      const to = stale ? null : change.to(license);
      const until = change.paidUntil;
      if (until !== null && (license.validUntil === null || until.getTime() > license.validUntil.getTime())) patch.validUntil = until;
      // A trial always has an end (licenses/domain.ts trialExpiryError): no trialing without one.
      const statusPatch = to === null || (to === "trialing" && (patch.validUntil ?? license.validUntil) === null) ? null : billingTransition(license, to);
      if (statusPatch) Object.assign(patch, statusPatch);
      return patch;
    },
    at,
    (before, patch) => {
      const after: License = { ...before, ...patch };
      const diff = diffChanges(licenseAuditView(before), licenseAuditView(after));
      // A suspended license's status stays; what it returns to on reinstate is the change then.
      const priorChanged = "priorStatus" in patch && patch.priorStatus !== before.priorStatus;
      const changes = priorChanged
        ? { before: { ...diff.before, prior_status: before.priorStatus }, after: { ...diff.after, prior_status: after.priorStatus } }
        : diff;
      if (Object.keys(changes.before ?? {}).length === 0) return {};
      const events: OutboxEvent[] = [];
      const extended = "validUntil" in patch;
      if (after.status === "canceled" && before.status !== "canceled") {
        events.push(licenseCanceled(before, after, at));
        outcome = "canceled";
      } else if (change.renewal && extended) {
        events.push(licenseRenewed(before, after, at));
        outcome = "renewed";
      } else {
        const event = licenseBillingUpdated(before, after, at);
        if (event) events.push(event);
        outcome = after.status !== before.status ? after.status : extended ? "extended" : "updated";
      }
      return {
        audit: {
          actor: ctx.actor,
          action: change.action,
          entityType: "license",
          entityId: before.id,
          productId: before.productId,
          changes,
          at,
        },
        events,
      };
    },
  );
  return outcome;
}

/**
 * The link of the event's subscription, or — for a subscription Keyward sold whose license does
 * not exist yet (this event came before checkout.session.completed) — the link of a license issued
 * now from `issue`. null: not a Keyward subscription, or nothing to issue from.
 */
async function linkOrIssue(
  ctx: BillingEventContext,
  subscriptionId: string,
  issue: { metadata: Record<string, string>; email: string | null; customerId: string | null; status: BillingStatus | null; validUntil: Date | null; subscriptionStatus: string | null } | null,
): Promise<{ link: BillingLink; issued: boolean } | null> {
  const find = () => ctx.tx.repos.payments.findLinkBySubscription(subscriptionId);
  const link = await find();
  if (link) return { link, issued: false };
  const meta = issue && purchaseMetadata(issue.metadata);
  if (!issue || !meta) return null;
  if (issue.status !== "active" && issue.status !== "trialing") return null;
  const email = meta.email ?? issue.email;
  if (!email) return null;
  const plan = await ctx.tx.repos.plans.findById(meta.planId);
  if (!plan) return null;
  // Another event of the same purchase may be issuing it right now (claimPurchaseIssue).
  const claim = await claimPurchaseIssue(ctx, subscriptionId, find);
  if (claim.link) return { link: claim.link, issued: false };
  if (!claim.mayIssue) return null;
  // A trial needs its end; without one the license starts active until the period end arrives.
  const status = issue.status === "trialing" && issue.validUntil !== null ? "trialing" : "active";
  const issued = await issuePurchasedLicense(ctx, {
    plan,
    email,
    status,
    validUntil: issue.validUntil,
    customerId: issue.customerId,
    subscriptionId,
    checkoutSessionId: null,
    subscriptionStatus: issue.subscriptionStatus,
  });
  return { link: issued.link, issued: true };
}

/** invoice.paid: records the payment, extends valid_until to the invoice's period end, active again. */
export async function invoicePaid(ctx: BillingEventContext): Promise<string> {
  const invoice = readInvoice(ctx.event.data.object);
  if (!invoice) return "ignored_malformed";
  if (!invoice.subscriptionId) return "ignored_not_subscription_invoice";
  const paid = (invoice.amountPaid ?? 0) > 0;
  const found = await linkOrIssue(ctx, invoice.subscriptionId, {
    metadata: invoice.subscriptionMetadata,
    email: invoice.email,
    customerId: invoice.customerId,
    // A $0 first invoice is the start of a trial; a paid one an active subscription.
    status: paid || invoice.billingReason !== "subscription_create" ? "active" : "trialing",
    validUntil: invoice.periodEnd,
    // What a paid (or $0 trial) invoice implies for the subscription; its own events refine it.
    subscriptionStatus: paid || invoice.billingReason !== "subscription_create" ? "active" : "trialing",
  });
  if (!found) return UNKNOWN_SUBSCRIPTION;
  const { link } = found;
  let recorded = false;
  if (paid) {
    await lockLicense(ctx, link.licenseId);
    recorded = await ctx.tx.repos.payments.recordPayment({
      id: newId(),
      licenseId: link.licenseId,
      // The first invoice pays for the purchase itself (checkout.session.completed records the same one).
      kind: invoice.billingReason === "subscription_create" ? "purchase" : "subscription",
      stripeCheckoutSessionId: null,
      stripeInvoiceId: invoice.id,
      stripePaymentIntentId: null,
      amount: invoice.amountPaid,
      currency: invoice.currency,
      paidAt: ctx.at,
      refundState: null,
      stripeRefundId: null,
      refundedAt: null,
      createdAt: ctx.at,
    });
  }
  if (found.issued) return "issued";
  return await applyBilling(ctx, link, {
    // A $0 invoice (a trial's first one) does not end the trial; any paid invoice does, and ends a past_due episode.
    to: (license) => (paid || license.status !== "trialing" ? "active" : null),
    paidUntil: invoice.periodEnd,
    renewal: recorded && invoice.billingReason === "subscription_cycle",
    // A paid invoice leaves the subscription active (Stripe's own status follows in customer.subscription.updated).
    ...(paid ? { subscriptionStatus: "active", statusInferred: true } : {}),
    action: "license.billing.invoice_paid",
  });
}

/** invoice.payment_failed: past_due (the lifecycle pass sends dunning and ends long episodes). */
export async function invoicePaymentFailed(ctx: BillingEventContext): Promise<string> {
  const invoice = readInvoice(ctx.event.data.object);
  if (!invoice) return "ignored_malformed";
  if (!invoice.subscriptionId) return "ignored_not_subscription_invoice";
  const link = await ctx.tx.repos.payments.findLinkBySubscription(invoice.subscriptionId);
  if (!link) return UNKNOWN_SUBSCRIPTION;
  return await applyBilling(ctx, link, {
    to: () => "past_due",
    paidUntil: null,
    renewal: false,
    subscriptionStatus: "past_due",
    statusInferred: true,
    action: "license.billing.payment_failed",
  });
}

/** customer.subscription.created / .updated: the status mapping; trial end or period end as valid_until. */
export async function subscriptionChanged(ctx: BillingEventContext): Promise<string> {
  const sub = readSubscription(ctx.event.data.object);
  if (!sub || !sub.status) return "ignored_malformed";
  const to = billingStatusOf(sub.status);
  const paidUntil = to === "trialing" ? sub.trialEnd : to === "active" ? sub.periodEnd : null;
  const found = await linkOrIssue(ctx, sub.id, {
    metadata: sub.metadata,
    email: null,
    customerId: sub.customerId,
    status: to,
    validUntil: paidUntil,
    subscriptionStatus: sub.status,
  });
  if (!found) return UNKNOWN_SUBSCRIPTION;
  if (found.issued) return "issued";
  return await applyBilling(ctx, found.link, {
    to: () => to,
    paidUntil,
    renewal: false,
    subscriptionStatus: sub.status,
    action: "license.billing.subscription_updated",
  });
}

/** customer.subscription.deleted: canceled (event license.canceled). */
export async function subscriptionDeleted(ctx: BillingEventContext): Promise<string> {
  const sub = readSubscription(ctx.event.data.object);
  if (!sub) return "ignored_malformed";
  const link = await ctx.tx.repos.payments.findLinkBySubscription(sub.id);
  if (!link) return UNKNOWN_SUBSCRIPTION;
  return await applyBilling(ctx, link, {
    to: () => "canceled",
    paidUntil: null,
    renewal: false,
    subscriptionStatus: sub.status ?? "canceled",
    action: "license.billing.subscription_deleted",
  });
}

/** The Stripe event types this module handles, for the dispatcher's registry (handlers.ts). */
export const SUBSCRIPTION_HANDLERS = {
  "invoice.paid": invoicePaid,
  "invoice.payment_failed": invoicePaymentFailed,
  "customer.subscription.created": subscriptionChanged,
  "customer.subscription.updated": subscriptionChanged,
  "customer.subscription.deleted": subscriptionDeleted,
} as const;
