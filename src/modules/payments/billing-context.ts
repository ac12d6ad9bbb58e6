// What the purchase and subscription handlers work with: the dispatcher's context (handlers.ts runs
// them inside the transaction that claimed the event id) and the event's Stripe time.
import type { License } from "../licenses/repo";
import type { StripeHandlerContext } from "./event-context";

export type BillingEventContext = StripeHandlerContext;

/** The Stripe time of an event (`created`, whole seconds). */
export const eventTime = (ctx: BillingEventContext): Date => new Date(ctx.event.created * 1000);

/**
 * Takes the license row's lock for the rest of the transaction and returns the row; null when it
 * does not exist. Every handler that touches a license's billing link or payments takes it first,
 * so concurrent events of one purchase lock in one order (license, then link and payment rows) and
 * never deadlock on PostgreSQL. SQLite runs one writer at a time.
 */
export async function lockLicense(ctx: BillingEventContext, licenseId: string): Promise<License | null> {
  return await ctx.tx.repos.licenses.lock(licenseId);
}
