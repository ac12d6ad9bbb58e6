// Support renewals (spec: License rule 5; docs/payments.md "Support renewals"): the effect of a paid
// renewal checkout. Runs inside the Stripe event's transaction (handlers.ts), so the payment row, the
// new support_until, the event license.support_renewed, the confirmation email and the audit row
// commit together with the record that the event was processed — once, however often Stripe
// delivers it and however many nodes receive it.
import { changeLicense } from "../licenses/change";
import type Stripe from "stripe";
import { DAY, LATEST_INSTANT_MS } from "../../shared/clock";
import { newId } from "../../shared/ids";
import { licenseSupportRenewed } from "../licenses/events";
import type { License } from "../licenses/repo";
import type { Effects } from "../outbox/effects";
import { isoOrNull } from "../outbox/events";
import { supportRenewedEmail } from "./emails";
import { checkoutSession, type StripeHandlerContext } from "./event-context";
import { ref } from "./stripe-objects";

/**
 * The renewed window: max(now, support_until) + support_days, so an early renewer keeps the time
 * left and a lapsed window restarts from now. null (unlimited support) stays null: a renewal never
 * shortens an unlimited window. A window pushed past the last storable instant (an admin set
 * support_until near 9999-12-31) ends there: PostgreSQL cannot store a later one.
 */
export function renewedSupportUntil(current: Date | null, supportDays: number, now: Date): Date | null {
  if (current === null) return null;
  return new Date(Math.min(Math.max(now.getTime(), current.getTime()) + supportDays * DAY, LATEST_INSTANT_MS));
}

/** The license a Keyward checkout is for: metadata.keyward_license_id, else client_reference_id. */
export function checkoutLicenseId(session: Stripe.Checkout.Session): string | null {
  const id = session.metadata?.keyward_license_id ?? session.client_reference_id;
  return typeof id === "string" && id !== "" ? id : null;
}

/**
 * checkout.session.completed / async_payment_succeeded with metadata.keyward_kind "support_renewal".
 * Outcomes: support_renewed; support_unlimited (paid, recorded, support_until was null and stays so);
 * ignored_unpaid (a delayed payment method: async_payment_succeeded follows); ignored_no_license;
 * ignored_license_not_found; ignored_license_revoked (the payment is recorded so it can be refunded,
 * the license is not touched); ignored_already_recorded (this checkout session was applied by an
 * earlier event). Never creates a license.
 */
export async function applySupportRenewal(ctx: StripeHandlerContext): Promise<string> {
  const { tx, event, at } = ctx;
  const { repos } = tx;
  const session = checkoutSession(event);
  // "no_payment_required": a 100 % discount the vendor granted; the renewal is still bought.
  if (session.payment_status !== "paid" && session.payment_status !== "no_payment_required") return "ignored_unpaid";
  const licenseId = checkoutLicenseId(session);
  if (licenseId === null) return "ignored_no_license";
  const license = await repos.licenses.findById(licenseId);
  if (!license) return "ignored_license_not_found";
  const recorded = await repos.payments.recordPayment({
    id: newId(),
    licenseId: license.id,
    kind: "support_renewal",
    stripeCheckoutSessionId: session.id,
    stripeInvoiceId: null,
    stripePaymentIntentId: ref(session.payment_intent),
    amount: session.amount_total ?? null,
    currency: session.currency ?? null,
    paidAt: at,
    refundState: null,
    stripeRefundId: null,
    refundedAt: null,
    createdAt: at,
  });
  if (!recorded) return "ignored_already_recorded";

  const plan = await repos.plans.findById(license.planId);
  const product = await repos.products.findById(license.productId);
  const supportDays = plan?.supportDays ?? 365;
  let outcome = "support_renewed";
  const audit = (before: License, supportUntil: Date | null, result: string): Effects["audit"] => ({
    actor: ctx.actor,
    action: "license.support_renew",
    entityType: "license",
    entityId: before.id,
    productId: before.productId,
    changes: {
      result,
      stripe_event_id: event.id,
      stripe_checkout_session_id: session.id,
      amount: session.amount_total ?? null,
      currency: session.currency ?? null,
      support_days: supportDays,
      support_until: { from: isoOrNull(before.supportUntil), to: isoOrNull(supportUntil) },
    },
    at,
  });
  // The license row is read again under the write lock: the window grows from its current value.
  await changeLicense(
    repos,
    license.id,
    (current) => {
      if (current.status === "revoked") {
        outcome = "ignored_license_revoked";
        return {};
      }
      if (current.supportUntil === null) {
        outcome = "support_unlimited";
        return {};
      }
      return { supportUntil: renewedSupportUntil(current.supportUntil, supportDays, at) };
    },
    at,
    (before, patch) => {
      if (outcome !== "support_renewed") return { audit: audit(before, before.supportUntil, outcome) };
      const after: License = { ...before, ...patch, updatedAt: at };
      return {
        audit: audit(before, after.supportUntil, outcome),
        events: [licenseSupportRenewed(before, after, at)],
        emails: [supportRenewedEmail(tx.secrets, { before, after, productName: product?.name ?? "", planName: plan?.name ?? "", at })],
      };
    },
  );
  return outcome;
}
