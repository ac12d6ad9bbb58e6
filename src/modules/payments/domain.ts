// Payment rules that are plain values (docs/payments.md).

/**
 * Requests per minute and client address on POST /webhooks/stripe. Generous: Stripe delivers from a
 * small set of addresses and redelivers a backlog in bursts; over the limit the answer is 429 and
 * Stripe retries later. The signature check is an HMAC, so a flood costs little before it is refused.
 */
export const STRIPE_WEBHOOK_PER_MINUTE = 1200;

