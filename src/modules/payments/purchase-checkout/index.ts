// POST /license/checkout: buy a license of a plan through Stripe Checkout (purchase.ts). Public, under
// the public per-address rate limit of every /license/ route.
import { Elysia } from "elysia";
import type { Deps } from "../../../deps";
import { Envelope, errors, ok } from "../../../http/envelope";
import { t } from "../../../http/schema";
import { createPurchaseCheckout } from "../purchase";

export const PurchaseCheckoutBody = t.Object(
  {
    plan_id: t.String({ format: "uuid", description: "The plan to buy (its purchase_price_id is charged)" }),
    email: t.String({ format: "email", maxLength: 320, description: "The buyer's address: prefilled (and fixed) in Checkout; the license is issued to it and its key emailed there" }),
  },
  { additionalProperties: false },
);

export const CheckoutUrlResponse = t.Object(
  { checkout_url: t.String({ format: "uri", description: "Stripe Checkout page to send the buyer to" }) },
  { additionalProperties: false, title: "CheckoutUrl" },
);

export function purchaseRoutes(deps: Deps) {
  return new Elysia({ name: "keyward/payments/purchase" }).post(
    "/license/checkout",
    async ({ body }) => {
      const { checkoutUrl } = await createPurchaseCheckout(deps, { planId: body.plan_id, email: body.email });
      return ok({ checkout_url: checkoutUrl });
    },
    {
      body: PurchaseCheckoutBody,
      response: { 200: Envelope(CheckoutUrlResponse), ...errors(404, 429, 502, 503) },
      detail: {
        tags: ["License"],
        summary: "Buy a license: start a Stripe Checkout for a plan",
        description:
          "Creates a Stripe Checkout Session for the plan's purchase_price_id and returns its URL. Subscription plans are sold as a Stripe subscription (with the plan's purchase_trial_days as a free trial), perpetual plans as a one-time payment. When Stripe reports the checkout paid (webhook checkout.session.completed), Keyward issues a license of the plan to `email` and emails its key (template license_purchased). 404 PLAN_NOT_FOUND for an unknown plan; 503 PURCHASE_NOT_AVAILABLE when the plan has no purchase_price_id, is a trial plan, or Stripe is not configured; 502 PAYMENT_PROVIDER_ERROR when Stripe cannot be reached. No credential; the public per-address rate limit applies.",
        security: [],
      },
    },
  );
}
