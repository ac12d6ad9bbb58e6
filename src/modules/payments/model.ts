// Schemas of the payment routes (index.ts).
import { t } from "../../http/schema";
import { LicenseKeyField, ProductIdField } from "../license-api/model";

export const StripeEventBody = t.Object(
  {
    id: t.String({ description: "Stripe event id (evt_…)" }),
    type: t.String({ description: "Stripe event type, e.g. checkout.session.completed" }),
  },
  {
    additionalProperties: true,
    title: "StripeEvent",
    description: "A Stripe Event object exactly as Stripe sends it; its Stripe-Signature header is verified over the raw body before anything in it is used.",
  },
);

export const StripeWebhookResult = t.Object(
  {
    received: t.Literal(true),
    duplicate: t.Boolean({ description: "The event id was already processed: this delivery changed nothing" }),
    outcome: t.String({
      description:
        "What processing did, e.g. support_renewed, support_unlimited, ignored (an event type Keyward does not handle), ignored_unpaid, ignored_not_keyward_checkout, ignored_license_not_found, ignored_license_revoked, ignored_already_recorded (docs/payments.md)",
    }),
  },
  { additionalProperties: false, title: "StripeWebhookResult" },
);


export const SupportCheckoutBody = t.Object(
  {
    license_key: LicenseKeyField,
    product_id: ProductIdField,
  },
  { additionalProperties: false },
);

export const SupportCheckoutResponse = t.Object(
  { checkout_url: t.String({ format: "uri", description: "Stripe Checkout page: redirect the customer there to pay" }) },
  { additionalProperties: false, title: "SupportCheckout" },
);
