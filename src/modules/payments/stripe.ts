// The Stripe client (official SDK; DECISIONS: Payments). Under Bun the SDK loads its web build: its
// webhook helpers are the *Async ones (constructEventAsync, generateTestHeaderStringAsync). Configured
// at boot from STRIPE_SECRET_KEY; STRIPE_API_BASE points it at another host (a local fake in tests).
//
// The SDK is imported when payments are first used, not at start: it is the largest module of the
// bundle (about 580 KB), and loading it cost every start several milliseconds and megabytes of
// memory, on every node, configured for payments or not (docs/performance.md, Start-up;
// test/arch/startup-imports.test.ts keeps it out of the start).
import type Stripe from "stripe";
import type { StripeConfig } from "../../config";

/** Stripe for the payment verbs: `await deps.stripe.sdk()` is the SDK client, loaded on first use. */
export interface StripeClient {
  sdk(): Promise<Stripe>;
}

type StripeClass = typeof Stripe;
let loaded: StripeClass | null = null;

/** The SDK's class once some client has loaded it; null before (then no error can be one of its). */
export const loadedStripeSdk = (): StripeClass | null => loaded;

export function createStripeClient(config: StripeConfig): StripeClient {
  let client: Promise<Stripe> | null = null;
  const open = async (): Promise<Stripe> => {
    const { default: StripeSdk } = await import("stripe");
    loaded = StripeSdk;
    return new StripeSdk(config.secretKey, {
      ...(config.apiBase ?? {}),
      // POSTs are retried with the SDK's own Idempotency-Key: a lost response never charges or refunds twice.
      maxNetworkRetries: 2,
      timeout: 20_000,
      telemetry: false,
      appInfo: { name: "Keyward", url: "https://github.com/keyward" },
    });
  };
  return {
    sdk: () =>
      (client ??= open().catch((e: unknown) => {
        client = null; // a failed load is tried again by the next call
        throw e;
      })),
  };
}
