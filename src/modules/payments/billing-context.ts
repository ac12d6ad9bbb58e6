// What a Stripe event handler of the payments module works with (the dispatcher runs it inside the
// transaction that claimed the event id), and the actor its changes are audited under.
import type { Deps, Repos } from "../../deps";
import { SYSTEM_ACTOR, type Actor } from "../../shared/actor";

/** What a Stripe event handler receives (the dispatcher in handlers.ts runs it in the claim's transaction). */
export interface BillingEventContext {
  deps: Deps;
  repos: Repos;
  event: { id: string; type: string; created: number; data: { object: unknown } };
  at: Date;
}

/** The actor of changes a Stripe event makes: the system, with the event id as the request id. */
export function stripeActor(eventId: string): Actor {
  return { ...SYSTEM_ACTOR, id: "stripe", requestId: eventId };
}

/** The Stripe time of an event. */
export const eventTime = (ctx: BillingEventContext): Date => new Date(ctx.event.created * 1000);

