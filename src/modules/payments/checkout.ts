// POST /license/support/checkout (spec: License rule 5; docs/payments.md "Support renewals"): a
// Stripe Checkout Session that sells one support renewal of the license behind a key. The payment's
// effect is applied by the webhook (renewal.ts), never here: this only opens the checkout.
import { createHash } from "node:crypto";
import type Stripe from "stripe";
import type { Deps } from "../../deps";
import { AppError } from "../../shared/errors";
import { MINUTE } from "../../shared/clock";
import { assertNotLockedOut, recordFailedLookup } from "../abuse/service";
import { belongsToProduct, isUsableAccess, keyHashOf, licenseNotFound } from "../license-api/access";

/** Where Stripe sends the buyer back (pages served by index.ts, under BASE_URL). */
export const CHECKOUT_SUCCESS_PATH = "/checkout/success";
export const CHECKOUT_CANCEL_PATH = "/checkout/cancel";

/**
 * Identical requests for the same license within this window reuse one Checkout Session (a Stripe
 * Idempotency-Key over the window and the session's parameters): a double click opens one session,
 * not two. Changed parameters (another price, another email) make another key, never a Stripe
 * idempotency error.
 */
export const CHECKOUT_REUSE_WINDOW_MS = MINUTE;

export function checkoutReturnUrls(baseUrl: string): { successUrl: string; cancelUrl: string } {
  const base = baseUrl.replace(/\/+$/, "");
  // Stripe replaces {CHECKOUT_SESSION_ID} with the session's id.
  return { successUrl: `${base}${CHECKOUT_SUCCESS_PATH}?session_id={CHECKOUT_SESSION_ID}`, cancelUrl: `${base}${CHECKOUT_CANCEL_PATH}` };
}

/** A Stripe API failure as the spec envelope: 502, retry later (the SDK already retried). */
export function paymentProviderError(e: unknown): AppError {
  const type = (e as { type?: unknown })?.type;
  return new AppError("PAYMENT_PROVIDER_ERROR", { details: typeof type === "string" ? { stripe_error: type } : null });
}

export interface SupportCheckoutInput {
  licenseKey: string;
  productId?: string;
  /** Client address for the brute-force lockout. */
  ip: string;
}

/**
 * Order of answers: 503 RENEWAL_NOT_AVAILABLE when Stripe is not configured (before any key lookup:
 * it says nothing about keys); 429 LOCKED_OUT while the address is locked out; 404 LICENSE_NOT_FOUND
 * for a malformed, unknown or other-product key (counted as a failed attempt, like activate) and
 * for a license that is not usable (revoked, suspended, expired, canceled: the same collapsed answer
 * verify gives); 503 RENEWAL_NOT_AVAILABLE when the plan has no support_renewal_price_id; 409
 * CONFLICT when the license's support is unlimited (nothing to renew).
 */
export async function createSupportCheckout(deps: Deps, input: SupportCheckoutInput): Promise<{ checkoutUrl: string }> {
  const stripe = deps.stripe;
  if (!stripe) throw new AppError("RENEWAL_NOT_AVAILABLE", { message: "Support renewal is not available: payments are not configured." });
  const now = deps.clock.now();
  await assertNotLockedOut(deps, input.ip, now);
  const hash = keyHashOf(deps, input.licenseKey);
  const access = hash === null ? null : await deps.repos.licenseAccess.findByKeyHash(hash);
  if (!access || !belongsToProduct(access, input.productId)) {
    await recordFailedLookup(deps, input.ip, now);
    throw licenseNotFound();
  }
  if (!isUsableAccess(access, now)) throw licenseNotFound();
  const [license, plan, link] = await Promise.all([
    deps.repos.licenses.findById(access.license.id),
    deps.repos.plans.findById(access.license.planId),
    deps.repos.payments.findLink(access.license.id),
  ]);
  if (!license) throw licenseNotFound();
  const priceId = plan?.supportRenewalPriceId ?? null;
  if (!plan || priceId === null) {
    throw new AppError("RENEWAL_NOT_AVAILABLE", { message: "Support renewal is not available for this license's plan." });
  }
  if (license.supportUntil === null) {
    throw new AppError("CONFLICT", {
      message: "This license has unlimited support and updates; there is nothing to renew.",
      details: { reason: "support_unlimited" },
    });
  }
  const metadata = { keyward_kind: "support_renewal", keyward_license_id: license.id };
  const { successUrl, cancelUrl } = checkoutReturnUrls(deps.config.baseUrl);
  const params: Stripe.Checkout.SessionCreateParams = {
    mode: "payment",
    line_items: [{ price: priceId, quantity: 1 }],
    metadata,
    client_reference_id: license.id,
    payment_intent_data: { metadata },
    success_url: successUrl,
    cancel_url: cancelUrl,
    // The Stripe customer the license is billed through when there is one; else prefill the owner's email.
    ...(link?.stripeCustomerId ? { customer: link.stripeCustomerId } : { customer_email: license.email }),
  };
  return await openCheckoutSession(await stripe.sdk(), "support-checkout", params, now);
}

/**
 * Creates a Checkout Session and answers its URL (502 PAYMENT_PROVIDER_ERROR when Stripe fails).
 * Identical requests within CHECKOUT_REUSE_WINDOW_MS share one Stripe idempotency key, so a double
 * click opens one session; other parameters make another key.
 */
export async function openCheckoutSession(
  stripe: Stripe,
  purpose: "support-checkout" | "purchase-checkout",
  params: Stripe.Checkout.SessionCreateParams,
  now: Date,
): Promise<{ checkoutUrl: string }> {
  const window = Math.floor(now.getTime() / CHECKOUT_REUSE_WINDOW_MS);
  const idempotencyKey = `keyward-${purpose}:${createHash("sha256").update(JSON.stringify([window, params])).digest("hex")}`;
  let session: Stripe.Checkout.Session;
  try {
    session = await stripe.checkout.sessions.create(params, { idempotencyKey });
  } catch (e) {
    throw paymentProviderError(e);
  }
  if (!session.url) throw paymentProviderError(null);
  return { checkoutUrl: session.url };
}
