// Metered billing against a local fake Stripe (docs/payments.md "Metered billing"): accepted usage of
// a plan quota feature with a stripe_meter is queued in the usage write's transaction, and
// POST /admin/system/run-metered-sync (and the metered-sync job) send each report to Stripe exactly
// once as a meter event — through Stripe failures, lost answers, repeated and concurrent runs.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createTestApp, type TestApp } from "../../support/app";
import { startFakeStripe, type FakeStripe } from "../../support/fake-stripe";
import { catalog, post, quota } from "../../support/license-api";
import { V1, expectError } from "../admin/helpers";

let fake: FakeStripe;
let t: TestApp;
beforeAll(async () => {
  fake = await startFakeStripe();
  t = await createTestApp({ env: fake.env() });
});
afterAll(async () => {
  await t.close();
  await fake.stop();
});

const METERED = { ...quota("api", 10), stripeMeter: "api_calls" };

/** A license of a plan with a metered quota ("api", meter api_calls) and a plain one ("exports"). */
async function meteredLicense(customer: string | null = `cus_${crypto.randomUUID().slice(0, 8)}`) {
  const c = await catalog(t, {}, [METERED, quota("exports", 5)]);
  if (customer) {
    const at = t.clock.now();
    await t.deps.repos.payments.upsertLink({ licenseId: c.license.id, stripeCustomerId: customer, stripeSubscriptionId: null, stripeCheckoutSessionId: null, subscriptionStatus: null, createdAt: at, updatedAt: at });
  }
  return { ...c, customer };
}

const use = (key: string, feature: string, quantity = 1) => post(t, "/license/usage", { license_key: key, feature, quantity });
const sync = () => t.request("POST", `${V1}/admin/system/run-metered-sync`);
const queued = (licenseId: string) => t.deps.repos.meterQueue.listByLicense(licenseId);
/** Meter events the fake accepted for an identifier (handler answers, not replays or failures). */
const accepted = (identifier: string) => fake.callsTo("POST", "/v1/billing/meter_events").filter((c) => c.body.identifier === identifier && c.status === 200);
const meterEventsAtStripe = (identifier: string) => [...fake.objects.values()].filter((o) => o.object === "billing.meter_event" && o.identifier === identifier);

describe("queueing with the usage write", () => {
  test("an accepted report of a metered feature queues one meter event; other features and refused reports queue nothing", async () => {
    const { license, key } = await meteredLicense();
    expect((await use(key, "api", 3)).status).toBe(200);
    expect((await use(key, "exports", 2)).status).toBe(200);
    expect((await use(key, "api", 8)).status).toBe(429); // over the quota of 10: refused
    expect((await use(key, "api", 7)).status).toBe(200);
    const rows = await queued(license.id);
    expect(rows.map((r) => [r.feature, r.eventName, r.quantity, r.status, r.attempts])).toEqual([
      ["api", "api_calls", 3, "pending", 0],
      ["api", "api_calls", 7, "pending", 0],
    ]);
    expect(rows.every((r) => r.occurredAt.getTime() === t.clock.nowMs() && r.nextAttemptAt.getTime() === t.clock.nowMs())).toBe(true);
  });

  test("reports at once (batched per counter on PostgreSQL): one queued event per accepted report, none for the refused", async () => {
    const { license, key } = await meteredLicense();
    const answers = await Promise.all(Array.from({ length: 16 }, () => use(key, "api", 1)));
    expect(answers.filter((r) => r.status === 200)).toHaveLength(10);
    expect(answers.filter((r) => r.status === 429)).toHaveLength(6);
    const rows = await queued(license.id);
    expect(rows.map((r) => r.quantity)).toEqual(Array(10).fill(1));
    expect(new Set(rows.map((r) => r.id)).size).toBe(10);
  });

  test("a plan without meters queues nothing", async () => {
    const { license, key } = await catalog(t, {}, [quota("api", 10)]);
    expect((await use(key, "api", 2)).status).toBe(200);
    expect(await queued(license.id)).toEqual([]);
  });
});

describe("POST /admin/system/run-metered-sync", () => {
  test("sends each queued report once with its identifier, customer, value and timestamp; a second run sends nothing", async () => {
    const { license, key, customer } = await meteredLicense();
    await use(key, "api", 2);
    t.clock.advance(1000);
    await use(key, "api", 5);
    const rows = await queued(license.id);

    const res = await sync();
    expect(res.status).toBe(200);
    const mine = res.body.data.items.filter((i: any) => i.license_id === license.id);
    expect(mine).toEqual(
      rows.map((r) => ({ id: r.id, license_id: license.id, feature: "api", event_name: "api_calls", quantity: r.quantity, occurred_at: r.occurredAt.toISOString(), attempts: 1 })),
    );
    for (const r of rows) {
      const [call] = accepted(r.id);
      expect(call!.body).toEqual({
        event_name: "api_calls",
        identifier: r.id,
        payload: { stripe_customer_id: customer, value: String(r.quantity) },
        timestamp: String(Math.floor(r.occurredAt.getTime() / 1000)),
      });
    }
    expect((await queued(license.id)).map((r) => [r.status, r.sentAt?.getTime()])).toEqual(rows.map(() => ["sent", t.clock.nowMs()]));

    const calls = fake.callsTo("POST", "/v1/billing/meter_events").length;
    const again = await sync();
    expect(again.body.data).toEqual({ claimed: 0, sent: 0, skipped: 0, retrying: 0, items: [] });
    expect(fake.callsTo("POST", "/v1/billing/meter_events").length).toBe(calls);
  });

  test("Stripe fails the first attempt: the SDK's retry sends it in the same run, once", async () => {
    const { license, key } = await meteredLicense();
    await use(key, "api", 4);
    const [row] = await queued(license.id);
    fake.failNext("POST", "/v1/billing/meter_events", 1, 500);
    const res = await sync();
    expect(res.body.data).toMatchObject({ sent: 1, retrying: 0 });
    expect(meterEventsAtStripe(row!.id)).toHaveLength(1);
    expect((await queued(license.id))[0]!.status).toBe("sent");
  });

  test("a failure that outlasts the SDK's retries: the row waits with backoff and the next due run sends it, once", async () => {
    const { license, key } = await meteredLicense();
    await use(key, "api", 6);
    const [row] = await queued(license.id);
    fake.failNext("POST", "/v1/billing/meter_events", 3, 503);
    const res = await sync();
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ sent: 0, retrying: 1 });
    const waiting = (await queued(license.id))[0]!;
    expect(waiting).toMatchObject({ status: "pending", attempts: 1 });
    expect(waiting.lastError).toContain("503");
    // First retry after 30 s with equal jitter: between 15 and 30 seconds from now.
    const delay = waiting.nextAttemptAt.getTime() - t.clock.nowMs();
    expect(delay).toBeGreaterThanOrEqual(15_000);
    expect(delay).toBeLessThanOrEqual(30_000);

    // Not due yet: nothing is sent.
    expect((await sync()).body.data.claimed).toBe(0);
    t.clock.advance(delay);
    const retried = await sync();
    expect(retried.body.data.items.map((i: any) => [i.id, i.attempts])).toContainEqual([row!.id, 2]);
    expect(meterEventsAtStripe(row!.id)).toHaveLength(1);
    expect((await queued(license.id))[0]).toMatchObject({ status: "sent", attempts: 2, lastError: null });
  });

  test("an event Stripe already has (answer lost) is recorded as sent, not sent twice", async () => {
    const { license, key, customer } = await meteredLicense();
    await use(key, "api", 1);
    const [row] = await queued(license.id);
    // It reached Stripe, but Keyward never learned (a crash or a lost answer).
    await (await t.deps.stripe!.sdk()).billing.meterEvents.create({ event_name: "api_calls", payload: { stripe_customer_id: customer!, value: "1" }, identifier: row!.id });
    const res = await sync();
    expect(res.body.data.items.map((i: any) => i.id)).toContain(row!.id);
    expect(meterEventsAtStripe(row!.id)).toHaveLength(1);
    expect((await queued(license.id))[0]!.status).toBe("sent");
  });

  test("a license without a Stripe customer: skipped with the reason; never sent", async () => {
    const { license, key } = await meteredLicense(null);
    await use(key, "api", 2);
    const [row] = await queued(license.id);
    const res = await sync();
    expect(res.body.data.skipped).toBeGreaterThanOrEqual(1);
    expect((await queued(license.id))[0]).toMatchObject({ status: "skipped", lastError: expect.stringContaining("no Stripe customer") });
    expect(fake.callsTo("POST", "/v1/billing/meter_events").some((c) => c.body.identifier === row!.id)).toBe(false);
    expect((await sync()).body.data.claimed).toBe(0);
  });

  test("an event Stripe refuses (400) is skipped with Stripe's reason", async () => {
    const { license, key } = await meteredLicense();
    await use(key, "api", 2);
    fake.failNext("POST", "/v1/billing/meter_events", 1, 400, { error: { type: "invalid_request_error", code: "parameter_invalid_integer", message: "Timestamp too old." } });
    const res = await sync();
    expect(res.body.data).toMatchObject({ sent: 0, skipped: 1 });
    expect((await queued(license.id))[0]).toMatchObject({ status: "skipped", lastError: expect.stringContaining("Timestamp too old.") });
  });

  test("runs at once (two admin runs and the scheduled pass) send each event once", async () => {
    const { license, key } = await catalog(t, {}, [{ ...quota("calls", null), stripeMeter: "calls" }]);
    const at = t.clock.now();
    await t.deps.repos.payments.upsertLink({ licenseId: license.id, stripeCustomerId: "cus_many", stripeSubscriptionId: null, stripeCheckoutSessionId: null, subscriptionStatus: null, createdAt: at, updatedAt: at });
    for (let i = 1; i <= 30; i++) expect((await use(key, "calls", i)).status).toBe(200);
    const rows = await queued(license.id);
    expect(rows.length).toBe(30);
    const before = fake.callsTo("POST", "/v1/billing/meter_events").length;
    const [a, b, job] = await Promise.all([sync(), sync(), t.request("POST", `${V1}/admin/system/jobs/metered-sync/run`)]);
    expect([a.status, b.status, job.status]).toEqual([200, 200, 200]);
    const ids = new Set(rows.map((r) => r.id));
    const sentByRoutes = [...a.body.data.items, ...b.body.data.items].filter((i: any) => ids.has(i.id)).length;
    expect(sentByRoutes).toBeLessThanOrEqual(30);
    expect((await queued(license.id)).every((r) => r.status === "sent" && r.attempts === 1)).toBe(true);
    const calls = fake.callsTo("POST", "/v1/billing/meter_events").slice(before).filter((c) => ids.has(c.body.identifier));
    // Claimed before sending: no run sent a row another run had, so Stripe never saw a duplicate.
    expect(calls.length).toBe(30);
    expect(calls.every((c) => c.status === 200)).toBe(true);
    for (const r of rows) expect(meterEventsAtStripe(r.id)).toHaveLength(1);
  });

  test("a product-bound key is refused (system-wide); a licenses:write key too", async () => {
    const { product } = await catalog(t);
    expectError(await t.request("POST", `${V1}/admin/system/run-metered-sync`, { key: await t.apiKey(["admin"], product.id) }), 403, "PRODUCT_SCOPE_MISMATCH");
    expectError(await t.request("POST", `${V1}/admin/system/run-metered-sync`, { key: await t.apiKey(["licenses:write"]) }), 403, "INSUFFICIENT_SCOPE");
  });
});

describe("without Stripe", () => {
  test("the route answers 503; the job does nothing and the queue keeps its rows", async () => {
    const plain = await createTestApp();
    try {
      const c = await catalog(plain, {}, [METERED]);
      expect((await post(plain, "/license/usage", { license_key: c.key, feature: "api" })).status).toBe(200);
      expectError(await plain.request("POST", `${V1}/admin/system/run-metered-sync`), 503, "PAYMENTS_NOT_CONFIGURED");
      const job = await plain.request("POST", `${V1}/admin/system/jobs/metered-sync/run`);
      expect(job.status).toBe(200);
      expect(job.body.data).toMatchObject({ status: "ok", result: {} });
      expect((await plain.deps.repos.meterQueue.listByLicense(c.license.id)).map((r) => r.status)).toEqual(["pending"]);
    } finally {
      await plain.close();
    }
  });
});
