// POST /webhooks/stripe (route: index.ts; docs/payments.md "Stripe webhook"): Stripe's event notifications, verified
// with the SDK against the exact request body and processed exactly once.
//
// The body: the JSON body parser (http/body.ts) reads it within MAX_BODY_BYTES and keeps the exact
// text in the request context; the signature is checked over that text (Stripe signs the bytes it
// sent; strict UTF-8 decoding keeps them). Nothing is read from the parsed body before the
// signature verifies.
//
// Exactly once: the event id is claimed (stripe_events) in the same transaction as the event's
// effect. A redelivery, or the same event reaching two nodes at once, finds the claim (PostgreSQL:
// the second claim waits for the first transaction, then sees it) and changes nothing. A failure
// rolls the claim back with the effect, and the 5xx makes Stripe redeliver.
import type Stripe from "stripe";
import type { Deps } from "../../deps";
import { AppError } from "../../shared/errors";
import { STRIPE_ACTOR, stripeEventHandler } from "./handlers";

export interface StripeEventResult {
  /** The event id was already processed (this delivery changed nothing). */
  duplicate: boolean;
  /** What processing did (stripe_events.outcome), e.g. support_renewed, ignored, ignored_unpaid. */
  outcome: string;
}

/** Verifies a Stripe-Signature header over the raw body; 503 / 400 with stable codes. */
export async function verifyStripeEvent(deps: Deps, raw: string, signature: string | null): Promise<Stripe.Event> {
  const secret = deps.config.stripe?.webhookSecret ?? null;
  if (!deps.stripe || secret === null) {
    throw new AppError("PAYMENTS_NOT_CONFIGURED", { message: "Stripe webhooks are not configured on this server (STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET)." });
  }
  if (signature === null || signature === "") throw new AppError("STRIPE_SIGNATURE_INVALID", { message: "The Stripe-Signature header is missing." });
  const stripe = await deps.stripe.sdk();
  try {
    return await stripe.webhooks.constructEventAsync(raw, signature, secret);
  } catch {
    // The SDK's message may quote the expected signature scheme; the answer stays generic.
    throw new AppError("STRIPE_SIGNATURE_INVALID");
  }
}

/**
 * Applies one verified event exactly once. The event id is claimed and the handler's effect written
 * in ONE transaction; a claimed id answers duplicate with its recorded outcome.
 */
export async function processStripeEvent(deps: Deps, event: Stripe.Event, opts: { requestId?: string | null } = {}): Promise<StripeEventResult> {
  // Fast path for redeliveries: no Stripe reads (prepare) for an event already applied.
  const known = await deps.repos.payments.eventOutcome(event.id);
  if (known !== null) return { duplicate: true, outcome: known };
  const handler = stripeEventHandler(event.type);
  // A handler's Stripe reads happen here, outside the transaction (DECISIONS: Payments).
  const prepared = handler && typeof handler !== "function" ? await handler.prepare({ deps, event }) : undefined;
  const at = deps.clock.now();
  const result = await deps.db.transaction(async (tx): Promise<StripeEventResult> => {
    if (!(await tx.repos.payments.claimEvent(event.id, event.type, "processing", at))) {
      return { duplicate: true, outcome: (await tx.repos.payments.eventOutcome(event.id)) ?? "processing" };
    }
    const ctx = { tx, event, at, prepared, actor: { ...STRIPE_ACTOR, requestId: opts.requestId ?? null } };
    const outcome = handler === null ? "ignored" : typeof handler === "function" ? await handler(ctx) : await handler.apply(ctx);
    await tx.repos.payments.setEventOutcome(event.id, outcome);
    return { duplicate: false, outcome };
    // Stripe never redelivers an event once answered 200: the commit must survive a power cut first.
  }, { durable: true });
  // Its emails (a renewal confirmation, a purchased key) wake the delivery worker as they are written.
  return result;
}
