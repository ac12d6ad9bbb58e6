// POST /webhooks/stripe basics: configuration, signature verification, exactly-once bookkeeping.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createTestApp, type TestApp } from "../../support/app";
import { startFakeStripe, type FakeStripe } from "../../support/fake-stripe";

const PATH = "/api/v1/webhooks/stripe";

describe("POST /webhooks/stripe", () => {
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

  const deliver = (payload: string, signature: string | null, app: TestApp = t) =>
    app.request("POST", PATH, { body: payload, raw: true, headers: signature === null ? {} : { "stripe-signature": signature } });

  test("an event type Keyward does not handle is acknowledged once, then as a duplicate", async () => {
    const ev = await fake.signedEvent("customer.created", { id: "cus_1", object: "customer" });
    const first = await deliver(ev.payload, ev.signature);
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ success: true, data: { received: true, duplicate: false, outcome: "ignored" } });
    const again = await deliver(ev.payload, ev.signature);
    expect(again.body.data).toEqual({ received: true, duplicate: true, outcome: "ignored" });
    expect(await t.deps.repos.payments.eventOutcome(ev.id)).toBe("ignored");
  });

  test("a bad, missing or stale signature is 400 STRIPE_SIGNATURE_INVALID and records nothing", async () => {
    const forged = await fake.signedEvent("customer.created", { id: "cus_2", object: "customer" }, { secret: "whsec_wrong" });
    const bad = await deliver(forged.payload, forged.signature);
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe("STRIPE_SIGNATURE_INVALID");
    const missing = await deliver(forged.payload, null);
    expect(missing.status).toBe(400);
    expect(missing.body.error.code).toBe("STRIPE_SIGNATURE_INVALID");
    // A body changed after signing (one byte) does not verify.
    const good = await fake.signedEvent("customer.created", { id: "cus_3", object: "customer" });
    const tampered = await deliver(good.payload.replace("cus_3", "cus_4"), good.signature);
    expect(tampered.status).toBe(400);
    expect(tampered.body.error.code).toBe("STRIPE_SIGNATURE_INVALID");
    expect(await t.deps.repos.payments.eventOutcome(forged.id)).toBeNull();
    expect(await t.deps.repos.payments.eventOutcome(good.id)).toBeNull();
  });

  test("not JSON is a 400 in the envelope", async () => {
    const res = await t.request("POST", PATH, { body: "not json", raw: true, headers: { "stripe-signature": "t=1,v1=00" } });
    expect(res.status).toBe(400);
    expect(res.body.success).toBe(false);
    expect(res.body.error.code).toBe("VALIDATION_ERROR");
  });

  test("503 PAYMENTS_NOT_CONFIGURED without a webhook secret, or without Stripe", async () => {
    for (const env of [fake.env({ webhookSecret: false }), {}]) {
      const other = await createTestApp({ env });
      try {
        const ev = await fake.signedEvent("customer.created", { id: "cus_5", object: "customer" });
        const res = await deliver(ev.payload, ev.signature, other);
        expect(res.status).toBe(503);
        expect(res.body.error.code).toBe("PAYMENTS_NOT_CONFIGURED");
      } finally {
        await other.close();
      }
    }
  });
});
