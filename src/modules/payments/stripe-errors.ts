// How a failed Stripe call is read by the callers that must decide whether Stripe may have acted.
// The SDK throws StripeError subclasses: an HTTP answer carries `statusCode` (and Stripe's `code`),
// a connection failure or timeout has none. The SDK has already retried network errors, 409 and 5xx
// (maxNetworkRetries, stripe.ts) before the error reaches us.
import { loadedStripeSdk } from "./stripe";

export interface StripeFailure {
  /**
   * true: Stripe answered with a 4xx that means the request was refused and did nothing (400, 401,
   * 402, 403, 404, 429). false: no answer (network, timeout), a 5xx, or 409 (a request with the same
   * idempotency key still in flight) — Stripe may have acted or may still act.
   */
  definite: boolean;
  /** HTTP status, or null without an answer. */
  status: number | null;
  /** Stripe's error code (e.g. resource_already_exists, charge_already_refunded), or null. */
  code: string | null;
  /** A short description safe to store and show (Stripe's message, no request data). */
  message: string;
}

const MAX_MESSAGE = 300;

export function stripeFailure(e: unknown): StripeFailure {
  // The SDK is loaded on first use (stripe.ts): an error thrown before it was loaded is not one of its.
  const StripeError = loadedStripeSdk()?.errors.StripeError;
  if (StripeError && e instanceof StripeError) {
    const status = typeof e.statusCode === "number" ? e.statusCode : null;
    const definite = status !== null && status >= 400 && status < 500 && status !== 409;
    return { definite, status, code: e.code ?? null, message: `${status ?? "no answer"}${e.code ? ` ${e.code}` : ""}: ${e.message}`.slice(0, MAX_MESSAGE) };
  }
  return { definite: false, status: null, code: null, message: (e instanceof Error ? e.message : String(e)).slice(0, MAX_MESSAGE) };
}
