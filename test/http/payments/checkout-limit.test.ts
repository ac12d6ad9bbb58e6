// The per-address limit on opening Stripe Checkout sessions (RATE_LIMIT_CHECKOUT_PER_MINUTE): the two
// checkout routes share one counter; past it, 429 RATE_LIMITED with Retry-After and no call reaches
// Stripe; another address still checks out; 0 turns the limit off.
import { afterEach, expect, test } from "bun:test";
import { createTestApp, type TestApp } from "../../support/app";
import { startFakeStripe, type FakeStripe } from "../../support/fake-stripe";
import { makeLicense, makePlan, makeProduct } from "../../support/factories";

const V1 = "/api/v1";
const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  while (cleanup.length) await cleanup.pop()!();
});

async function setup(env: Record<string, string>): Promise<{ t: TestApp; fake: FakeStripe; buy: (i: number, ip?: string) => Promise<number>; renew: (ip?: string) => Promise<number> }> {
  const fake = await startFakeStripe();
  // The limit is per client address: trust X-Forwarded-For so a test can speak for two addresses.
  const t = await createTestApp({ env: { ...fake.env(), TRUST_PROXY: "true", ...env } });
  cleanup.push(() => fake.stop(), () => t.close());
  const product = await makeProduct(t.deps);
  const plan = await makePlan(t.deps, product.id, { purchasePriceId: "price_buy", supportRenewalPriceId: "price_renew" });
  const { key } = await makeLicense(t.deps, { productId: product.id, planId: plan.id, supportUntil: new Date(t.clock.nowMs() + 86_400_000) });
  const headers = (ip: string) => ({ "x-forwarded-for": ip });
  return {
    t,
    fake,
    // A distinct email each time: identical requests would reuse one session (Stripe idempotency).
    buy: async (i, ip = "203.0.113.7") =>
      (await t.request("POST", `${V1}/license/checkout`, { body: { plan_id: plan.id, email: `buyer${i}@example.com` }, key: null, headers: headers(ip) })).status,
    renew: async (ip = "203.0.113.7") => (await t.request("POST", `${V1}/license/support/checkout`, { body: { license_key: key }, key: null, headers: headers(ip) })).status,
  };
}

test("the two checkout routes share one counter per address: the 21st in a minute is 429 and reaches no Stripe", async () => {
  const { t, fake, buy, renew } = await setup({});
  expect(t.deps.config.rateLimitCheckoutPerMinute).toBe(20);
  const statuses = [await renew()];
  for (let i = 0; i < 19; i++) statuses.push(await buy(i));
  expect(statuses).toEqual(Array(20).fill(200));
  const before = fake.callsTo("POST", "/v1/checkout/sessions").length;
  const limited = await t.request("POST", `${V1}/license/support/checkout`, { body: { license_key: "KW-AAAAA-AAAAA-AAAAA-AAAAA-AAAAA" }, key: null, headers: { "x-forwarded-for": "203.0.113.7" } });
  expect(limited.status).toBe(429);
  expect(limited.body.error.code).toBe("RATE_LIMITED");
  expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
  expect(await buy(99)).toBe(429);
  expect(fake.callsTo("POST", "/v1/checkout/sessions").length).toBe(before);
  // Another address has its own counter; the rest of the public API is not affected by this one.
  expect(await buy(100, "198.51.100.9")).toBe(200);
  expect((await t.request("GET", `${V1}/health`, { key: null, headers: { "x-forwarded-for": "203.0.113.7" } })).status).toBe(200);
});

test("RATE_LIMIT_CHECKOUT_PER_MINUTE=0 turns the checkout limit off", async () => {
  const { buy } = await setup({ RATE_LIMIT_CHECKOUT_PER_MINUTE: "0" });
  const statuses: number[] = [];
  for (let i = 0; i < 25; i++) statuses.push(await buy(i));
  expect(statuses).toEqual(Array(25).fill(200));
});
