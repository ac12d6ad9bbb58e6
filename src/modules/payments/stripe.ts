// The Stripe client (official SDK; DECISIONS: Payments). Under Bun the SDK loads its web build: its
// webhook helpers are the *Async ones (constructEventAsync, generateTestHeaderStringAsync). Built once
// at boot from STRIPE_SECRET_KEY; STRIPE_API_BASE points it at another host (a local fake in tests).
import Stripe from "stripe";
import type { StripeConfig } from "../../config";

export type StripeClient = Stripe;

export function createStripeClient(config: StripeConfig): Stripe {
  return new Stripe(config.secretKey, {
    ...(config.apiBase ?? {}),
    // POSTs are retried with the SDK's own Idempotency-Key: a lost response never charges or refunds twice.
    maxNetworkRetries: 2,
    timeout: 20_000,
    telemetry: false,
    appInfo: { name: "Keyward", url: "https://github.com/keyward" },
  });
}
