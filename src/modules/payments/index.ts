// The public payment routes: Stripe's webhook and the support renewal checkout.
import { Elysia } from "elysia";
import type { Deps } from "../../deps";
import { Envelope, errors, ok } from "../../http/envelope";
import { requestContext } from "../../http/request-context";
import { t } from "../../http/schema";
import { StripeEventBody, StripeWebhookResult, SupportCheckoutBody, SupportCheckoutResponse } from "./model";
import { processStripeEvent, verifyStripeEvent } from "./webhook";
import { CHECKOUT_CANCEL_PATH, CHECKOUT_SUCCESS_PATH, createSupportCheckout } from "./checkout";

export function stripeWebhookRoutes(deps: Deps) {
  return new Elysia({ name: "keyward/payments/webhook" }).post(
    "/webhooks/stripe",
    async ({ request }) => {
      const { rawBody, requestId } = requestContext(request);
      const event = await verifyStripeEvent(deps, rawBody ?? "", request.headers.get("stripe-signature"));
      const result = await processStripeEvent(deps, event, { requestId });
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
          "Receives Stripe events, verified with STRIPE_WEBHOOK_SECRET over the raw body: 400 STRIPE_SIGNATURE_INVALID (nothing changes) when the signature is missing, wrong or older than 5 minutes; 503 PAYMENTS_NOT_CONFIGURED without STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET. Each event id is processed exactly once: redeliveries and concurrent deliveries answer 200 with duplicate true. Handled: checkout.session.completed and checkout.session.async_payment_succeeded of Keyward checkouts (support renewal; purchase: issues the license and emails its key), invoice.paid, invoice.payment_failed and customer.subscription.created/updated/deleted of subscriptions Keyward sold (status and valid_until follow the subscription), charge.dispute.created (suspends the license of the disputed payment), charge.dispute.closed (won: reinstates a license the dispute suspended; lost: revokes) and charge.refunded (a full refund made outside Keyward: recorded, the license revoked; partial refunds are ignored); other types are acknowledged with outcome ignored. A 5xx (e.g. the database is down) makes Stripe retry. Has its own generous per-address rate limit (429 RATE_LIMITED; Stripe retries).",
        security: [],
      },
    },
  );
}

/** POST /license/support/checkout (public: the license key in the body is the credential). */
export function supportCheckoutRoutes(deps: Deps) {
  return new Elysia({ name: "keyward/payments/support-checkout" }).post(
    "/license/support/checkout",
    async ({ body, request }) => {
      const { checkoutUrl } = await createSupportCheckout(deps, { licenseKey: body.license_key, productId: body.product_id, ip: requestContext(request).ip });
      return ok({ checkout_url: checkoutUrl });
    },
    {
      body: SupportCheckoutBody,
      response: { 200: Envelope(SupportCheckoutResponse), ...errors(404, 409, 429, 502, 503) },
      detail: {
        tags: ["License"],
        summary: "Open a Stripe Checkout to renew the license's support window",
        description:
          "Returns checkout_url, a Stripe Checkout page selling one renewal (the plan's support_renewal_price_id). After payment, Stripe's webhook extends support_until to max(now, support_until) + support_days and Keyward emails a confirmation; the buyer returns to BASE_URL/checkout/success (or /checkout/cancel). 404 LICENSE_NOT_FOUND for unknown, malformed, other-product and unusable keys (revoked, suspended, expired, canceled); unknown keys count toward the per-address lockout (429 LOCKED_OUT). 503 RENEWAL_NOT_AVAILABLE when the plan has no support_renewal_price_id or Stripe is not configured; 409 CONFLICT when support is unlimited; 502 PAYMENT_PROVIDER_ERROR when Stripe fails. Identical requests within a minute return the same session.",
      },
    },
  );
}

const PAGE_STYLE = `body{font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;background:#f6f7f9;color:#1d2330}
main{max-width:32rem;margin:4rem auto;padding:2rem;background:#fff;border-radius:12px;box-shadow:0 1px 3px rgba(0,0,0,.08)}
h1{font-size:1.4rem;margin:0 0 1rem}
`;

const page = (title: string, paragraphs: string[]) => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${title}</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="style.css">
</head>
<body>
<main>
<h1>${title}</h1>
${paragraphs.map((p) => `<p>${p}</p>`).join("\n")}
</main>
</body>
</html>
`;

const SUCCESS_PAGE = page("Thank you for your payment", [
  "Your payment went through. Your license is updated as soon as Stripe confirms the payment to us, usually within seconds, and a confirmation email is on its way.",
  "You can close this page.",
]);

const CANCEL_PAGE = page("Payment canceled", ["No payment was made and nothing changed. You can close this page, or start the checkout again from the application."]);

export const CHECKOUT_PAGE_CSP = "default-src 'none'; style-src 'self'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/**
 * Where Stripe Checkout sends the buyer back: BASE_URL/checkout/success and /checkout/cancel. Static
 * pages (outside /api/v1 like the invite page): the webhook, not this visit, applies the payment, so
 * they read nothing (the session_id query parameter Stripe appends is ignored).
 */
export function checkoutPages() {
  const headers = { "content-security-policy": CHECKOUT_PAGE_CSP, "x-content-type-options": "nosniff", "referrer-policy": "no-referrer" };
  const serve = (body: string, type: string, cache: string) => () => new Response(body, { headers: { "content-type": type, "cache-control": cache, ...headers } });
  const hide = { detail: { hide: true } };
  return new Elysia({ name: "keyward/payments/checkout-pages" })
    .get(CHECKOUT_SUCCESS_PATH, serve(SUCCESS_PAGE, "text/html; charset=utf-8", "no-store"), hide)
    .get(CHECKOUT_CANCEL_PATH, serve(CANCEL_PAGE, "text/html; charset=utf-8", "no-store"), hide)
    .get("/checkout/style.css", serve(PAGE_STYLE, "text/css; charset=utf-8", "public, max-age=3600"), hide);
}
