// The shapes Stripe event handlers share (handlers.ts is the registry; webhook.ts runs them).
import type Stripe from "stripe";
import type { Deps } from "../../deps";
import type { Tx } from "../../db/store";
import type { Actor } from "../../shared/actor";
import { SYSTEM_ACTOR } from "../../shared/actor";

export interface StripeHandlerContext<P = unknown> {
  /**
   * The event's transaction: its repositories for every read and write, and what else a handler
   * may use inside it. Not Deps: Deps' repositories and Stripe are outside the transaction.
   */
  tx: Tx;
  event: Stripe.Event;
  /** When Keyward processes the event (the clock's now; not the event's `created`). */
  at: Date;
  /** What `prepare` returned (undefined without one). */
  prepared: P;
  /** The actor of audit rows: STRIPE_ACTOR with the delivery's request id. */
  actor: Actor;
}

export type StripeHandlerFn<P = unknown> = (ctx: StripeHandlerContext<P>) => Promise<string>;

export type StripeEventHandler<P = unknown> =
  | StripeHandlerFn<P>
  | {
      /** Before the transaction: Stripe reads only, no writes. */
      prepare: (ctx: { deps: Deps; event: Stripe.Event }) => Promise<P>;
      apply: StripeHandlerFn<P>;
    };

/** The actor of audit rows written for Stripe events: the system, named "stripe". */
export const STRIPE_ACTOR: Actor = { ...SYSTEM_ACTOR, id: "stripe" };

/** The `metadata.keyward_kind` values Keyward sets on the Checkout Sessions it creates. */
export type CheckoutKind = "support_renewal" | "purchase";

/** The Checkout Session of a checkout.session.* event. */
export const checkoutSession = (event: Stripe.Event): Stripe.Checkout.Session => event.data.object as Stripe.Checkout.Session;
