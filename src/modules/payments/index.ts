// The public payment routes: Stripe's webhook and the support renewal checkout.
import { Elysia } from "elysia";
import type { Deps } from "../../deps";
import { Envelope, errors, ok } from "../../http/envelope";
import { requestContext } from "../../http/request-context";
import { t } from "../../http/schema";
import { StripeEventBody, StripeWebhookResult } from "./model";
import { processStripeEvent, verifyStripeEvent } from "./webhook";

export function stripeWebhookRoutes(deps: Deps) {
  return new Elysia({ name: "keyward/payments/webhook" }).post(
    "/webhooks/stripe",
    async ({ request }) => {
      const raw = requestContext(request).rawBody ?? "";
      const event = await verifyStripeEvent(deps, raw, request.headers.get("stripe-signature"));
      const result = await processStripeEvent(deps, event);
      return ok({ received: true as const, duplicate: result.duplicate, outcome: result.outcome });
    },
    {
      body: StripeEventBody,
      headers: t.Object({ "stripe-signature": t.Optional(t.String({ maxLength: 4096, description: "Stripe's signature header (t=…,v1=…)" })) }),
      response: { 200: Envelope(StripeWebhookResult), ...errors(413, 429, 503) },
      detail: {
        tags: ["Payments"],
        summary: "Stripe webhook endpoint (configure it in the Stripe dashboard)",
        description:
          "Receives Stripe events, verified with STRIPE_WEBHOOK_SECRET over the raw body: 400 STRIPE_SIGNATURE_INVALID (nothing changes) when the signature is missing, wrong or older than 5 minutes; 503 PAYMENTS_NOT_CONFIGURED without STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET. Each event id is processed exactly once: redeliveries and concurrent deliveries answer 200 with duplicate true. Handled: checkout.session.completed and checkout.session.async_payment_succeeded of Keyward checkouts (support renewal); other types are acknowledged with outcome ignored. A 5xx (e.g. the database is down) makes Stripe retry. Has its own generous per-address rate limit (429 RATE_LIMITED; Stripe retries).",
        security: [],
      },
    },
  );
}
