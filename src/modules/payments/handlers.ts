// The Stripe event handlers (docs/payments.md "Stripe webhook"): a registry from event type to the
// handler that applies it. processStripeEvent (webhook.ts) calls a handler inside ONE transaction
// together with the claim of the event id, so the effect (license change, payment row, billing link,
// events, emails, audit row) commits exactly once with the record that the event was processed.
//
// A handler returns an outcome: a short string recorded with the event (stripe_events.outcome) and
// returned to Stripe in the response, e.g. "support_renewed", "ignored_unpaid". Outcomes starting
// with "ignored" mean the event was understood and deliberately left without effect. A handler
// throws only for failures a retry may fix (the transaction rolls back, the claim with it, and the
// route answers 5xx so Stripe redelivers).
//
// Handlers must not call Stripe: they run inside a database transaction (DECISIONS: Payments).
// Their context carries the transaction (`ctx.tx`: its repositories, clock, config, secrets), not
// Deps. A handler that needs Stripe data reads it in `prepare`, which runs before the transaction
// (and only when the event id is not recorded yet), gets Deps, and must not write anything.
//
// checkout.session.completed is dispatched once more, on the session's metadata.keyward_kind
// (set when Keyward created the session): CHECKOUT_KINDS below.
import type Stripe from "stripe";
import { checkoutSession, type CheckoutKind, type StripeEventHandler } from "./event-context";
import { applySupportRenewal } from "./renewal";
import { purchaseCompleted } from "./purchase";
import { SUBSCRIPTION_HANDLERS } from "./subscriptions";
import { DISPUTE_HANDLERS } from "./disputes";

export { checkoutSession, STRIPE_ACTOR, type CheckoutKind, type StripeEventHandler, type StripeHandlerContext, type StripeHandlerFn } from "./event-context";

/** Handlers of paid checkouts by `metadata.keyward_kind`. "purchase": the purchase checkout (sub). */
export const CHECKOUT_KINDS: Partial<Record<CheckoutKind, StripeEventHandler<any>>> = {
  support_renewal: applySupportRenewal,
  purchase: purchaseCompleted,
};

function checkoutKindHandler(event: Stripe.Event): StripeEventHandler<any> | null {
  const kind = checkoutSession(event).metadata?.keyward_kind;
  return typeof kind === "string" && Object.hasOwn(CHECKOUT_KINDS, kind) ? (CHECKOUT_KINDS[kind as CheckoutKind] ?? null) : null;
}

/**
 * Completed checkouts dispatch on metadata.keyward_kind; a session Keyward did not create (no or an
 * unknown kind: a payment link, another integration on the same Stripe account) is ignored.
 * checkout.session.async_payment_succeeded (delayed payment methods: the session completed
 * unpaid, the money arrived later) goes the same way: each kind's handler acts once the session
 * is paid, and the payment row (unique per checkout session) keeps it to one effect.
 */
const checkoutDispatch: StripeEventHandler<any> = {
  prepare: async (ctx) => {
    const handler = checkoutKindHandler(ctx.event);
    return handler && typeof handler !== "function" ? await handler.prepare(ctx) : undefined;
  },
  apply: async (ctx) => {
    const handler = checkoutKindHandler(ctx.event);
    if (!handler) return "ignored_not_keyward_checkout";
    return typeof handler === "function" ? await handler(ctx) : await handler.apply(ctx);
  },
};

/** Event type → handler. Types not listed are acknowledged with the outcome "ignored". */
export const STRIPE_EVENT_HANDLERS: Record<string, StripeEventHandler<any>> = {
  "checkout.session.completed": checkoutDispatch,
  "checkout.session.async_payment_succeeded": checkoutDispatch,
  // Subscriptions sold through the purchase checkout (subscriptions.ts).
  ...SUBSCRIPTION_HANDLERS,
  // Chargebacks and refunds made in the Stripe dashboard (disputes.ts).
  ...DISPUTE_HANDLERS,
};

/** The handler of an event type, or null (the event is acknowledged and ignored). */
export function stripeEventHandler(type: string): StripeEventHandler<any> | null {
  return Object.hasOwn(STRIPE_EVENT_HANDLERS, type) ? STRIPE_EVENT_HANDLERS[type]! : null;
}
