// What the purchase and subscription handlers work with: the dispatcher's context (handlers.ts runs
// them inside the transaction that claimed the event id) and the event's Stripe time.
import type { StripeHandlerContext } from "./event-context";

export type BillingEventContext = StripeHandlerContext;

/** The Stripe time of an event (`created`, whole seconds). */
export const eventTime = (ctx: BillingEventContext): Date => new Date(ctx.event.created * 1000);
