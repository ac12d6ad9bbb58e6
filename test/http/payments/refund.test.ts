// POST /admin/licenses/{id}/refund against a local fake Stripe (docs/payments.md "Refunds"): the
// license's last payment is refunded once at Stripe however the admin retries (in a row, twice at
// once, after a Stripe failure), then the license is revoked with an audit row and license.revoked.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createTestApp, type TestApp } from "../../support/app";
import { startFakeStripe, type FakeStripe } from "../../support/fake-stripe";
import { catalog, post } from "../../support/license-api";
import { newId } from "../../../src/shared/ids";
import type { Payment } from "../../../src/modules/payments/repo";
import { V1, expectError, lastAudit } from "../admin/helpers";

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

const HOUR = 3_600_000;

async function plantPayment(licenseId: string, over: Partial<Payment> = {}): Promise<Payment> {
  const paidAt = over.paidAt ?? t.clock.now();
  const payment: Payment = {
    id: newId(),
    licenseId,
    kind: "purchase",
    stripeCheckoutSessionId: `cs_${newId()}`,
    stripeInvoiceId: null,
    stripePaymentIntentId: `pi_${newId()}`,
    amount: 4900,
    currency: "usd",
    paidAt,
    refundState: null,
    stripeRefundId: null,
    refundedAt: null,
    disputeStatus: null,
    stripeDisputeId: null,
    createdAt: paidAt,
    ...over,
  };
  expect(await t.deps.repos.payments.recordPayment(payment)).toBe(true);
  return payment;
}

/** A paid, activated license. */
async function paidLicense() {
  const c = await catalog(t);
  expect((await post(t, "/license/activate", { license_key: c.key, identifier: "dev-1" })).status).toBe(200);
  return c;
}

/** license.revoked events recorded for a license (outbox rows). */
async function revokedEvents(licenseId: string): Promise<number> {
  const rows = await t.exec<{ payload: unknown }>("SELECT payload FROM outbox WHERE kind = 'event' AND topic = 'license.revoked'");
  return rows.filter((r) => (typeof r.payload === "string" ? r.payload : JSON.stringify(r.payload)).includes(licenseId)).length;
}

const refund = (licenseId: string, key?: string) => t.request("POST", `${V1}/admin/licenses/${licenseId}/refund`, key === undefined ? {} : { key });
/** Refunds Stripe created for a PaymentIntent (handler calls, not idempotent replays). */
const refundsFor = (intent: string) => fake.callsTo("POST", "/v1/refunds").filter((c) => c.body.payment_intent === intent && !c.replayed && c.status === 200);
const refundObjects = (intent: string) => [...fake.objects.values()].filter((o) => o.object === "refund" && o.payment_intent === intent);

describe("POST /admin/licenses/{id}/refund", () => {
  test("refunds the last payment once, revokes, audits; a retry answers the same refund without calling Stripe", async () => {
    const { license, key } = await paidLicense();
    await plantPayment(license.id, { paidAt: new Date(t.clock.nowMs() - 2 * HOUR), stripePaymentIntentId: "pi_older" });
    const last = await plantPayment(license.id, { amount: 1500, currency: "eur" });

    const res = await refund(license.id);
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ id: license.id, status: "revoked", activations: [] });
    const refundId = refundObjects(last.stripePaymentIntentId!)[0]!.id;
    expect(res.body.data.refund).toEqual({
      payment_id: last.id,
      kind: "purchase",
      stripe_refund_id: refundId,
      amount: 1500,
      currency: "eur",
      refunded_at: t.clock.now().toISOString(),
      refunded_now: true,
      subscription_canceled: null,
    });
    const [call] = refundsFor(last.stripePaymentIntentId!);
    expect(call!.idempotencyKey).toBe(`keyward-refund-${last.id}`);
    expect(call!.body.metadata).toEqual({ keyward_license_id: license.id, keyward_payment_id: last.id });
    expect(refundsFor("pi_older")).toHaveLength(0);

    // Revoked: the SDK's verify collapses to 404 (spec rule 4).
    expectError(await post(t, "/license/verify", { license_key: key, identifier: "dev-1" }), 404, "LICENSE_NOT_FOUND");
    const audit = await lastAudit(t, license.id, "license.refund");
    expect(audit.changes).toEqual({
      before: { status: "active" },
      after: { status: "revoked" },
      refund: { payment_id: last.id, stripe_refund_id: refundId, amount: 1500, currency: "eur" },
    });
    const stored = (await t.deps.repos.payments.listPayments(license.id))[0]!;
    expect(stored).toMatchObject({ id: last.id, refundState: "refunded", stripeRefundId: refundId });
    expect(await revokedEvents(license.id)).toBe(1);

    const calls = fake.calls.length;
    const again = await refund(license.id);
    expect(again.status).toBe(200);
    expect(again.body.data.status).toBe("revoked");
    expect(again.body.data.refund).toMatchObject({ payment_id: last.id, stripe_refund_id: refundId, refunded_now: false });
    expect(fake.calls.length).toBe(calls);
    expect(refundObjects(last.stripePaymentIntentId!)).toHaveLength(1);
    expect((await t.request("GET", `${V1}/admin/audit?entity_id=${license.id}&limit=50`)).body.data.items.filter((r: any) => r.action === "license.refund")).toHaveLength(1);
    expect(await revokedEvents(license.id)).toBe(1);
  });

  test("a $0 payment after the purchase (a 100 % coupon renewal) is skipped: the purchase is refunded", async () => {
    const { license } = await paidLicense();
    const purchase = await plantPayment(license.id);
    await plantPayment(license.id, { kind: "support_renewal", amount: 0, stripePaymentIntentId: null, paidAt: new Date(t.clock.nowMs() + HOUR) });
    const res = await t.request("POST", `${V1}/admin/licenses/${license.id}/refund`);
    expect(res.status).toBe(200);
    expect(res.body.data.refund).toMatchObject({ payment_id: purchase.id, kind: "purchase", refunded_now: true });
    expect(fake.callsTo("POST", "/v1/refunds").filter((c) => c.body.payment_intent === purchase.stripePaymentIntentId)).toHaveLength(1);
  });

  test("the revocation that records a refund made at Stripe commits durably", async () => {
    const { license } = await paidLicense();
    await plantPayment(license.id);
    const asked: (boolean | undefined)[] = [];
    const transaction = t.deps.db.transaction;
    t.deps.db.transaction = (fn, opts) => {
      asked.push(opts?.durable);
      return transaction(fn, opts);
    };
    try {
      expect((await refund(license.id)).status).toBe(200);
    } finally {
      t.deps.db.transaction = transaction;
    }
    expect(asked).toEqual([true]);
  });

  test("two requests at once: one refund at Stripe, one revoke, both answer 200", async () => {
    const { license } = await paidLicense();
    const payment = await plantPayment(license.id);
    const [a, b] = await Promise.all([refund(license.id), refund(license.id)]);
    expect([a.status, b.status]).toEqual([200, 200]);
    expect([a.body.data.refund.refunded_now, b.body.data.refund.refunded_now].sort()).toEqual([false, true]);
    expect(a.body.data.refund.stripe_refund_id).toBe(b.body.data.refund.stripe_refund_id);
    expect(refundsFor(payment.stripePaymentIntentId!)).toHaveLength(1);
    // The second request finds the payment "pending" and re-sends under the same key: Stripe (the
    // fake) answers it with a replay of the first refund, never a second one.
    const sent = fake.callsTo("POST", "/v1/refunds").filter((c) => c.body.payment_intent === payment.stripePaymentIntentId);
    expect(sent.filter((c) => !c.replayed)).toHaveLength(1);
    expect(new Set(sent.map((c) => c.idempotencyKey)).size).toBe(1);
    expect(refundObjects(payment.stripePaymentIntentId!)).toHaveLength(1);
    const audits = (await t.request("GET", `${V1}/admin/audit?entity_id=${license.id}&limit=50`)).body.data.items.filter((r: any) => r.action === "license.refund");
    expect(audits).toHaveLength(1);
    expect(await revokedEvents(license.id)).toBe(1);
  });

  test("Stripe failing past the SDK's retries: 502, the payment stays pending, the license unchanged; the retry refunds once under the same key", async () => {
    const { license } = await paidLicense();
    const payment = await plantPayment(license.id);
    // The SDK retries a 500 twice itself (maxNetworkRetries 2): three failures outlast it.
    fake.failNext("POST", "/v1/refunds", 3, 500);
    const failed = await refund(license.id);
    expectError(failed, 502, "PAYMENT_PROVIDER_ERROR");
    expect((await t.deps.repos.payments.listPayments(license.id))[0]!.refundState).toBe("pending");
    expect((await t.deps.repos.licenses.findById(license.id))!.status).toBe("active");

    const ok = await refund(license.id);
    expect(ok.status).toBe(200);
    expect(ok.body.data).toMatchObject({ status: "revoked", refund: { refunded_now: true } });
    const attempts = fake.callsTo("POST", "/v1/refunds").filter((c) => c.body.payment_intent === payment.stripePaymentIntentId);
    expect(attempts.map((c) => c.status)).toEqual([500, 500, 500, 200]);
    expect(new Set(attempts.map((c) => c.idempotencyKey))).toEqual(new Set([`keyward-refund-${payment.id}`]));
    expect(refundObjects(payment.stripePaymentIntentId!)).toHaveLength(1);
  });

  test("a Stripe answer lost after the refund was made (crash mid-call): the retry gets Stripe's replay, not a second refund", async () => {
    const { license } = await paidLicense();
    const payment = await plantPayment(license.id);
    // The refund happens at Stripe but Keyward never records it: as if the process died mid-call.
    await t.deps.repos.payments.claimRefund(payment.id);
    // The same request Keyward sends (Stripe replays a key only with the same parameters).
    await (await t.deps.stripe!.sdk()).refunds.create(
      { payment_intent: payment.stripePaymentIntentId!, metadata: { keyward_license_id: license.id, keyward_payment_id: payment.id } },
      { idempotencyKey: `keyward-refund-${payment.id}` },
    );
    const res = await refund(license.id);
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ status: "revoked", refund: { refunded_now: true } });
    expect(refundObjects(payment.stripePaymentIntentId!)).toHaveLength(1);
    expect(res.body.data.refund.stripe_refund_id).toBe(refundObjects(payment.stripePaymentIntentId!)[0]!.id);
  });

  test("Stripe refuses (4xx): 409 REFUND_FAILED, the claim is given back and the license unchanged", async () => {
    const { license } = await paidLicense();
    const payment = await plantPayment(license.id);
    fake.failNext("POST", "/v1/refunds", 1, 400, { error: { type: "invalid_request_error", code: "charge_disputed", message: "This charge is disputed." } });
    const res = await refund(license.id);
    expectError(res, 409, "REFUND_FAILED");
    expect(res.body.error.details).toMatchObject({ payment_id: payment.id, stripe_status: 400, stripe_code: "charge_disputed" });
    expect((await t.deps.repos.payments.listPayments(license.id))[0]!.refundState).toBeNull();
    expect((await t.deps.repos.licenses.findById(license.id))!.status).toBe("active");
    // Nothing left half-done: a later request may refund.
    expect((await refund(license.id)).status).toBe(200);
  });

  test("a subscription invoice payment: the PaymentIntent is found through invoice_payments; the subscription is canceled", async () => {
    const { license } = await paidLicense();
    const invoice = `in_${newId()}`;
    const subscription = `sub_${newId()}`;
    fake.objects.set(`inpay_${invoice}`, { id: `inpay_${invoice}`, object: "invoice_payment", invoice, status: "paid", is_default: true, amount_paid: 900, currency: "usd", payment: { type: "payment_intent", payment_intent: `pi_for_${invoice}` } });
    fake.objects.set(subscription, { id: subscription, object: "subscription", status: "active", customer: "cus_1" });
    const at = t.clock.now();
    await t.deps.repos.payments.upsertLink({ licenseId: license.id, stripeCustomerId: "cus_1", stripeSubscriptionId: subscription, stripeCheckoutSessionId: null, subscriptionStatus: "active", createdAt: at, updatedAt: at });
    const payment = await plantPayment(license.id, { kind: "subscription", stripeCheckoutSessionId: null, stripeInvoiceId: invoice, stripePaymentIntentId: null, amount: 900 });

    const res = await refund(license.id);
    expect(res.status).toBe(200);
    expect(res.body.data.refund).toMatchObject({ payment_id: payment.id, kind: "subscription", refunded_now: true, subscription_canceled: true });
    expect(fake.callsTo("GET", "/v1/invoice_payments").some((c) => c.query.invoice === invoice)).toBe(true);
    expect(refundsFor(`pi_for_${invoice}`)).toHaveLength(1);
    expect(fake.objects.get(subscription).status).toBe("canceled");
    expect(fake.calls.filter((c) => c.method === "DELETE" && c.path === `/v1/subscriptions/${subscription}`)).toHaveLength(1);
  });

  test("a license already revoked can still be refunded (it stays revoked; no second license.revoked)", async () => {
    const { license } = await paidLicense();
    const payment = await plantPayment(license.id);
    expect((await t.request("POST", `${V1}/admin/licenses/${license.id}/revoke`)).status).toBe(200);
    const res = await refund(license.id);
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ status: "revoked", refund: { payment_id: payment.id, refunded_now: true } });
    expect((await lastAudit(t, license.id, "license.refund")).changes.refund.payment_id).toBe(payment.id);
    expect(await revokedEvents(license.id)).toBe(1);
  });

  test("409 NOTHING_TO_REFUND without a payment; 404 unknown license; 400 a non-UUID id", async () => {
    const { license } = await catalog(t);
    const res = await refund(license.id);
    expectError(res, 409, "NOTHING_TO_REFUND");
    expect((await t.deps.repos.licenses.findById(license.id))!.status).toBe("active");
    expectError(await refund(newId()), 404, "NOT_FOUND");
    expectError(await refund("not-a-uuid"), 400, "VALIDATION_ERROR");
  });

  test("a product-bound key is confined to its product's licenses; licenses:write may refund", async () => {
    const { license, product } = await paidLicense();
    await plantPayment(license.id);
    const other = await catalog(t);
    expectError(await refund(license.id, await t.apiKey(["admin"], other.product.id)), 403, "PRODUCT_SCOPE_MISMATCH");
    expectError(await refund(license.id, await t.apiKey(["read"])), 403, "INSUFFICIENT_SCOPE");
    expect((await refund(license.id, await t.apiKey(["licenses:write"], product.id))).status).toBe(200);
  });
});

describe("without Stripe", () => {
  test("503 PAYMENTS_NOT_CONFIGURED; nothing changes", async () => {
    const plain = await createTestApp();
    try {
      const { license } = await catalog(plain);
      const at = plain.clock.now();
      await plain.deps.repos.payments.recordPayment({ id: newId(), licenseId: license.id, kind: "purchase", stripeCheckoutSessionId: "cs_x", stripeInvoiceId: null, stripePaymentIntentId: "pi_x", amount: 1, currency: "usd", paidAt: at, refundState: null, stripeRefundId: null, refundedAt: null, createdAt: at });
      const res = await plain.request("POST", `${V1}/admin/licenses/${license.id}/refund`);
      expectError(res, 503, "PAYMENTS_NOT_CONFIGURED");
      expect((await plain.deps.repos.licenses.findById(license.id))!.status).toBe("active");
      expect((await plain.deps.repos.payments.listPayments(license.id))[0]!.refundState).toBeNull();
    } finally {
      await plain.close();
    }
  });
});
