// Selling licenses (docs/payments.md, "Selling licenses"): POST /license/checkout opens a Stripe
// Checkout Session for a plan's purchase_price_id — a subscription for subscription plans, a
// one-time payment for perpetual ones — and the paid session's checkout.session.completed issues
// the license and emails its key. The issue runs in the webhook's transaction (after the event id
// was claimed) and at most once per Checkout Session and per subscription: the billing link is
// unique on both.
import type Stripe from "stripe";
import type { Deps } from "../../deps";
import { AppError } from "../../shared/errors";
import { DAY } from "../../shared/clock";
import { newId } from "../../shared/ids";
import { buildLicense, issueEffects } from "../licenses/service";
import { createLicense } from "../licenses/change";
import type { License } from "../licenses/repo";
import type { Plan } from "../plans/repo";
import type { BillingLink } from "./repo";
import { PURCHASE_KIND, purchaseMetadata, readCheckoutSession } from "./stripe-objects";
import { eventTime, lockLicense, type BillingEventContext } from "./billing-context";
import { checkoutReturnUrls, openCheckoutSession } from "./checkout";
import { licensePurchasedEmail } from "./emails";

export interface PurchaseCheckoutInput {
  planId: string;
  email: string;
}

/**
 * POST /license/checkout: 404 PLAN_NOT_FOUND for an unknown plan; 503 PURCHASE_NOT_AVAILABLE for a
 * plan without purchase_price_id, a trial plan, or without Stripe (docs/configuration.md); 502
 * PAYMENT_PROVIDER_ERROR when Stripe cannot be reached. The Stripe call is outside any transaction.
 */
export async function createPurchaseCheckout(deps: Deps, input: PurchaseCheckoutInput): Promise<{ checkoutUrl: string }> {
  const plan = await deps.repos.plans.findById(input.planId);
  if (!plan) throw new AppError("PLAN_NOT_FOUND");
  if (!plan.purchasePriceId || plan.licenseType === "trial") {
    throw new AppError("PURCHASE_NOT_AVAILABLE", { message: "This plan is not sold through checkout.", details: { plan_id: plan.id } });
  }
  if (!deps.stripe) throw new AppError("PURCHASE_NOT_AVAILABLE", { message: "Payments are not configured on this server." });
  const email = input.email.trim();
  const metadata = { keyward_kind: PURCHASE_KIND, keyward_plan_id: plan.id };
  const subscription = plan.licenseType === "subscription";
  const { successUrl, cancelUrl } = checkoutReturnUrls(deps.config.baseUrl);
  const params: Stripe.Checkout.SessionCreateParams = {
    mode: subscription ? "subscription" : "payment",
    line_items: [{ price: plan.purchasePriceId, quantity: 1 }],
    // Prefilled and fixed in Checkout: the license is issued to this address.
    customer_email: email,
    metadata,
    success_url: successUrl,
    cancel_url: cancelUrl,
    ...(subscription
      ? {
          // On the subscription too: its own events (which may arrive before the session's) name the plan and buyer.
          subscription_data: {
            metadata: { ...metadata, keyward_email: email },
            ...(plan.purchaseTrialDays > 0 ? { trial_period_days: plan.purchaseTrialDays } : {}),
          },
        }
      : // A Customer for one-time payments too, so the billing link names who paid.
        { customer_creation: "always", payment_intent_data: { metadata } }),
  };
  // A double click within the window opens one session (as the support checkout does).
  return await openCheckoutSession(await deps.stripe.sdk(), "purchase-checkout", params, deps.clock.now());
}

export interface PurchaseIssue {
  plan: Plan;
  email: string;
  status: "active" | "trialing";
  validUntil: Date | null;
  customerId: string | null;
  subscriptionId: string | null;
  checkoutSessionId: string | null;
  subscriptionStatus: string | null;
}

/**
 * Issues a purchased license in the webhook's transaction: the row (licenses/service.ts
 * buildLicense, the path admin issue uses), audit `license.issue` by the Stripe actor, event
 * `license.created`, the `license_purchased` email with the key sealed, and the billing link.
 * Support: a perpetual purchase gets the plan's support_days from now; a subscription's license
 * gets none (null: updates for as long as it is valid).
 */
export async function issuePurchasedLicense(ctx: BillingEventContext, p: PurchaseIssue): Promise<{ license: License; link: BillingLink }> {
  const { tx, at } = ctx;
  const { repos } = tx;
  const product = await repos.products.findById(p.plan.productId);
  const supportUntil = p.plan.licenseType === "perpetual" && p.plan.supportDays > 0 ? new Date(at.getTime() + p.plan.supportDays * DAY) : null;
  const { license, key } = buildLicense(
    tx,
    p.plan,
    { productId: p.plan.productId, email: p.email, status: p.status, validUntil: p.validUntil, supportUntil },
    at,
  );
  const email = licensePurchasedEmail(tx.secrets, { license, licenseKey: key, productName: product?.name ?? "", planName: p.plan.name, at });
  // In the webhook's unit of work, which is durable: the key is emailed once, and never again.
  const created = await createLicense(repos, license, [], { ...issueEffects(ctx.actor, license, [], at), emails: [email] });
  const link = await repos.payments.upsertLink({
    licenseId: created.id,
    stripeCustomerId: p.customerId,
    stripeSubscriptionId: p.subscriptionId,
    stripeCheckoutSessionId: p.checkoutSessionId,
    subscriptionStatus: p.subscriptionStatus,
    createdAt: at,
    // The Stripe time of the event that issued it: later subscription events compare against it.
    updatedAt: eventTime(ctx),
  });
  return { license: created, link };
}

/**
 * Serializes issuing one purchase across concurrent webhook transactions: Stripe sends a purchase's
 * checkout, subscription and invoice events at about the same moment, often to several nodes. The
 * transaction that first claims `key` (the subscription id, or a one-time purchase's Checkout
 * Session id) issues. The claim is a stripe_events row under the synthetic id
 * `keyward:purchase:<key>`, written in the transaction that issues the license: on PostgreSQL a
 * concurrent claim waits for that transaction and then reads the billing link it committed (and if
 * it rolled back, its claim went with it); SQLite runs one writer at a time anyway. Returns the link
 * another transaction committed, or `mayIssue` for this one.
 */
export async function claimPurchaseIssue(
  ctx: BillingEventContext,
  key: string,
  find: () => Promise<BillingLink | null>,
): Promise<{ link: BillingLink | null; mayIssue: boolean }> {
  const link = await find();
  if (link) return { link, mayIssue: false };
  if (await ctx.tx.repos.payments.claimEvent(`keyward:purchase:${key}`, "keyward.purchase_issue", "issued", ctx.at)) return { link: null, mayIssue: true };
  return { link: await find(), mayIssue: false };
}

/**
 * checkout.session.completed with metadata keyward_kind=purchase. Paid (or no_payment_required: a
 * subscription that starts with a trial): issues the license, records the payment (the payment
 * intent; for a subscription, its first invoice) and links the Stripe customer, subscription and
 * session. A session already handled, or a subscription whose license an earlier subscription
 * event issued, issues nothing more ("ignored_already_issued" / "linked").
 */
export async function purchaseCompleted(ctx: BillingEventContext): Promise<string> {
  const { tx: { repos }, at } = ctx;
  const session = readCheckoutSession(ctx.event.data.object);
  if (!session) return "ignored_malformed";
  const meta = purchaseMetadata(session.metadata);
  if (!meta) return "ignored_not_purchase";
  if (session.paymentStatus !== "paid" && session.paymentStatus !== "no_payment_required") return "ignored_unpaid";
  if (await repos.payments.findLinkByCheckoutSession(session.id)) return "ignored_already_issued";

  const subscription = session.mode === "subscription";
  const paid = session.paymentStatus === "paid" && (session.amount ?? 0) > 0;
  const record = async (licenseId: string) => {
    if (!paid) return;
    await repos.payments.recordPayment({
      id: newId(),
      licenseId,
      kind: "purchase",
      stripeCheckoutSessionId: session.id,
      stripeInvoiceId: subscription ? session.invoiceId : null,
      stripePaymentIntentId: session.paymentIntentId,
      amount: session.amount,
      currency: session.currency,
      paidAt: at,
      refundState: null,
      stripeRefundId: null,
      refundedAt: null,
      createdAt: at,
    });
  };

  const subscriptionId = subscription ? session.subscriptionId : null;
  const plan = await repos.plans.findById(meta.planId);
  const email = session.email ?? meta.email;
  const find = () => (subscriptionId ? repos.payments.findLinkBySubscription(subscriptionId) : repos.payments.findLinkByCheckoutSession(session.id));
  // Checked before claiming: a claim commits even when this event ends ignored.
  if (!(await find())) {
    if (!plan) return "ignored_unknown_plan";
    if (!email) return "ignored_no_email";
  }
  // A subscription event that came first (or concurrently) may have issued the license: link the session to it.
  const claim = await claimPurchaseIssue(ctx, subscriptionId ?? session.id, find);
  if (claim.link) {
    if (claim.link.stripeCheckoutSessionId === session.id) return "ignored_already_issued";
    await lockLicense(ctx, claim.link.licenseId);
    const current = (await repos.payments.findLink(claim.link.licenseId)) ?? claim.link;
    await repos.payments.upsertLink({
      ...current,
      stripeCustomerId: current.stripeCustomerId ?? session.customerId,
      stripeCheckoutSessionId: session.id,
    });
    await record(claim.link.licenseId);
    return "linked";
  }
  if (!claim.mayIssue || !plan || !email) return "ignored_already_issued";
  // A subscription checkout that needed no payment starts the plan's trial; its end is refined by
  // the subscription's own events (trial_end). A paid subscription's valid_until comes from the
  // period end of invoice.paid / customer.subscription.* (null until then).
  const trial = subscription && session.paymentStatus === "no_payment_required" && plan.purchaseTrialDays > 0;
  const { license } = await issuePurchasedLicense(ctx, {
    plan,
    email,
    status: trial ? "trialing" : "active",
    validUntil: trial ? new Date(at.getTime() + plan.purchaseTrialDays * DAY) : null,
    customerId: session.customerId,
    subscriptionId,
    checkoutSessionId: session.id,
    subscriptionStatus: subscription ? (trial ? "trialing" : "active") : null,
  });
  await record(license.id);
  return "issued";
}
