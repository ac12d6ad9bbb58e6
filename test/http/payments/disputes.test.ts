// Chargebacks and refunds made in the Stripe dashboard (docs/payments.md "Disputes and refunds made
// in Stripe"), through the real webhook route with events signed like Stripe's: a license bought
// through the purchase checkout is suspended by a dispute, reinstated when it is won (unless an
// admin had suspended it), revoked when it is lost or refunded in full outside Keyward; Keyward's
// own refunds and partial refunds change nothing more; repeated events act once.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createTestApp, type TestApp } from "../../support/app";
import { startFakeStripe, type FakeStripe } from "../../support/fake-stripe";
import { makePlan, makeProduct } from "../../support/factories";
import type { Plan } from "../../../src/modules/plans/repo";
import { newId } from "../../../src/shared/ids";
import { V1, auditFor, lastAudit } from "../admin/helpers";

let fake: FakeStripe;
let t: TestApp;
let plan: Plan;

beforeAll(async () => {
  fake = await startFakeStripe();
  t = await createTestApp({ env: fake.env() });
  const product = await makeProduct(t.deps, { name: "Acme Editor" });
  plan = await makePlan(t.deps, product.id, { purchasePriceId: "price_perpetual" });
});
afterAll(async () => {
  await t.close();
  await fake.stop();
});

const uid = () => newId().replaceAll("-", "").slice(-12);

async function deliver(type: string, object: Record<string, unknown>, opts: { id?: string } = {}) {
  const ev = await fake.signedEvent(type, object, opts);
  const res = await t.request("POST", `${V1}/webhooks/stripe`, { body: ev.payload, raw: true, headers: { "stripe-signature": ev.signature } });
  expect(res.status).toBe(200);
  return { ...ev, outcome: res.body.data.outcome as string, duplicate: res.body.data.duplicate as boolean };
}

interface Bought {
  licenseId: string;
  paymentIntent: string;
  charge: string;
}

/** A license bought through the purchase checkout (one-time payment), as Stripe reports it. */
async function buy(): Promise<Bought> {
  const email = `buyer-${uid()}@example.com`;
  const paymentIntent = `pi_${uid()}`;
  const session = {
    id: `cs_test_${uid()}`,
    object: "checkout.session",
    mode: "payment",
    status: "complete",
    payment_status: "paid",
    metadata: { keyward_kind: "purchase", keyward_plan_id: plan.id },
    client_reference_id: null,
    customer: `cus_${uid()}`,
    customer_details: { email },
    payment_intent: paymentIntent,
    subscription: null,
    invoice: null,
    amount_total: 4900,
    currency: "usd",
  };
  expect((await deliver("checkout.session.completed", session)).outcome).toBe("issued");
  const res = await t.request("GET", `${V1}/admin/licenses?email=${encodeURIComponent(email)}`);
  const [license] = res.body.data.items as any[];
  expect(license.status).toBe("active");
  return { licenseId: license.id, paymentIntent, charge: `ch_${uid()}` };
}

const dispute = (b: Bought, status: string, over: Record<string, unknown> = {}) => ({
  id: `du_${b.charge.slice(3)}`,
  object: "dispute",
  charge: b.charge,
  payment_intent: b.paymentIntent,
  status,
  amount: 4900,
  currency: "usd",
  reason: "fraudulent",
  is_charge_refundable: false,
  ...over,
});

const charge = (b: Bought, o: { refunded: boolean; amountRefunded: number; refundIds?: string[] }) => ({
  id: b.charge,
  object: "charge",
  payment_intent: b.paymentIntent,
  amount: 4900,
  amount_captured: 4900,
  amount_refunded: o.amountRefunded,
  currency: "usd",
  paid: true,
  captured: true,
  refunded: o.refunded,
  refunds: { object: "list", has_more: false, url: `/v1/charges/${b.charge}/refunds`, data: (o.refundIds ?? []).map((id) => ({ id, object: "refund", amount: o.amountRefunded, charge: b.charge, payment_intent: b.paymentIntent, status: "succeeded" })) },
});

const status = async (licenseId: string) => (await t.request("GET", `${V1}/admin/licenses/${licenseId}`)).body.data.status as string;
const payment = async (licenseId: string) => (await t.deps.repos.payments.listPayments(licenseId))[0]!;

const actorsOf = (licenseId: string, action: string) =>
  t.exec<{ actor_type: string; actor_id: string }>("SELECT actor_type, actor_id FROM audit_log WHERE action = $1 AND entity_id = $2", [action, licenseId]);

/** The license events recorded for a license (outbox rows), oldest first. */
async function eventsOf(licenseId: string): Promise<string[]> {
  const rows = await t.exec<{ payload: unknown }>("SELECT payload FROM outbox WHERE kind = 'event' ORDER BY created_at, id");
  return rows
    .map((r) => (typeof r.payload === "string" ? JSON.parse(r.payload) : r.payload) as { type: string; data: Record<string, any> })
    .filter((p) => p.data.license_id === licenseId)
    .map((p) => p.type);
}

describe("charge.dispute.created / charge.dispute.closed", () => {
  test("a dispute suspends the license (audit by stripe, license.suspended); won reinstates it (license.reinstated)", async () => {
    const b = await buy();
    const opened = await deliver("charge.dispute.created", dispute(b, "needs_response"));
    expect(opened.outcome).toBe("suspended");
    expect(await status(b.licenseId)).toBe("suspended");
    expect(await payment(b.licenseId)).toMatchObject({ disputeStatus: "open_suspended", stripeDisputeId: dispute(b, "").id });
    const audit = await lastAudit(t, b.licenseId, "license.dispute_suspend");
    expect(await actorsOf(b.licenseId, "license.dispute_suspend")).toEqual([{ actor_type: "system", actor_id: "stripe" }]);
    expect(audit.changes).toMatchObject({ before: { status: "active" }, after: { status: "suspended" }, dispute: { stripe_dispute_id: dispute(b, "").id, reason: "fraudulent", amount: 4900 } });
    expect(await eventsOf(b.licenseId)).toEqual(["license.created", "license.suspended"]);

    const closed = await deliver("charge.dispute.closed", dispute(b, "won"));
    expect(closed.outcome).toBe("reinstated");
    expect(await status(b.licenseId)).toBe("active");
    expect((await payment(b.licenseId)).disputeStatus).toBe("won");
    expect((await lastAudit(t, b.licenseId, "license.dispute_reinstate")).changes).toMatchObject({ before: { status: "suspended" }, after: { status: "active" } });
    expect(await eventsOf(b.licenseId)).toEqual(["license.created", "license.suspended", "license.reinstated"]);
  });

  test("an inquiry closed in the vendor's favour (warning_closed) reinstates too", async () => {
    const b = await buy();
    expect((await deliver("charge.dispute.created", dispute(b, "warning_needs_response", { reason: "general" }))).outcome).toBe("suspended");
    expect((await deliver("charge.dispute.closed", dispute(b, "warning_closed", { reason: "general" }))).outcome).toBe("reinstated");
    expect(await status(b.licenseId)).toBe("active");
  });

  test("a license an admin suspended stays suspended when the dispute is won", async () => {
    const b = await buy();
    expect((await t.request("POST", `${V1}/admin/licenses/${b.licenseId}/suspend`)).status).toBe(200);
    expect((await deliver("charge.dispute.created", dispute(b, "needs_response"))).outcome).toBe("dispute_recorded");
    expect((await payment(b.licenseId)).disputeStatus).toBe("open");
    expect((await deliver("charge.dispute.closed", dispute(b, "won"))).outcome).toBe("dispute_won");
    expect(await status(b.licenseId)).toBe("suspended");
    expect(await eventsOf(b.licenseId)).toEqual(["license.created", "license.suspended"]);
    expect((await auditFor(t, b.licenseId)).map((r) => r.action)).not.toContain("license.dispute_reinstate");
  });

  test("a license an admin reinstated during the dispute is left as it is when the dispute is won", async () => {
    const b = await buy();
    await deliver("charge.dispute.created", dispute(b, "needs_response"));
    expect((await t.request("POST", `${V1}/admin/licenses/${b.licenseId}/reinstate`)).status).toBe(200);
    expect((await deliver("charge.dispute.closed", dispute(b, "won"))).outcome).toBe("dispute_won");
    expect(await status(b.licenseId)).toBe("active");
    expect(await eventsOf(b.licenseId)).toEqual(["license.created", "license.suspended", "license.reinstated"]);
  });

  test("a lost dispute revokes the license (license.revoked) and marks the payment", async () => {
    const b = await buy();
    await deliver("charge.dispute.created", dispute(b, "needs_response"));
    const lost = await deliver("charge.dispute.closed", dispute(b, "lost"));
    expect(lost.outcome).toBe("revoked");
    expect(await status(b.licenseId)).toBe("revoked");
    expect(await payment(b.licenseId)).toMatchObject({ disputeStatus: "lost", refundState: null });
    expect((await lastAudit(t, b.licenseId, "license.dispute_revoke")).changes).toMatchObject({ before: { status: "suspended" }, after: { status: "revoked" }, dispute: { status: "lost" } });
    expect(await eventsOf(b.licenseId)).toEqual(["license.created", "license.suspended", "license.revoked"]);
  });

  test("a dispute on a revoked license is recorded and changes nothing; lost leaves it revoked without a second event", async () => {
    const b = await buy();
    expect((await t.request("POST", `${V1}/admin/licenses/${b.licenseId}/revoke`)).status).toBe(200);
    expect((await deliver("charge.dispute.created", dispute(b, "needs_response"))).outcome).toBe("dispute_recorded");
    expect((await deliver("charge.dispute.closed", dispute(b, "lost"))).outcome).toBe("dispute_lost");
    expect(await eventsOf(b.licenseId)).toEqual(["license.created", "license.revoked"]);
  });

  test("a payment Keyward does not know is ignored", async () => {
    const stranger: Bought = { licenseId: "", paymentIntent: `pi_${uid()}`, charge: `ch_${uid()}` };
    expect((await deliver("charge.dispute.created", dispute(stranger, "needs_response"))).outcome).toBe("ignored_unknown_payment");
    expect((await deliver("charge.dispute.closed", dispute(stranger, "lost"))).outcome).toBe("ignored_unknown_payment");
    expect((await deliver("charge.refunded", charge(stranger, { refunded: true, amountRefunded: 4900 }))).outcome).toBe("ignored_unknown_payment");
    expect((await deliver("charge.dispute.created", dispute(stranger, "needs_response", { payment_intent: null }))).outcome).toBe("ignored_unknown_payment");
  });

  test("repeated events act once: a redelivery is a duplicate; the same dispute under a new event id changes nothing more", async () => {
    const b = await buy();
    const first = await deliver("charge.dispute.created", dispute(b, "needs_response"));
    const again = await deliver("charge.dispute.created", dispute(b, "needs_response"), { id: first.id });
    expect(again).toMatchObject({ duplicate: true, outcome: "suspended" });
    expect((await deliver("charge.dispute.created", dispute(b, "needs_response"))).outcome).toBe("ignored_already_open");

    const won = await deliver("charge.dispute.closed", dispute(b, "won"));
    expect(won.outcome).toBe("reinstated");
    expect(await deliver("charge.dispute.closed", dispute(b, "won"), { id: won.id })).toMatchObject({ duplicate: true, outcome: "reinstated" });
    expect((await deliver("charge.dispute.closed", dispute(b, "won"))).outcome).toBe("ignored_already_closed");
    // Two deliveries at once: one applies.
    const c = await buy();
    const ev = await fake.signedEvent("charge.dispute.created", dispute(c, "needs_response"));
    const send = () => t.request("POST", `${V1}/webhooks/stripe`, { body: ev.payload, raw: true, headers: { "stripe-signature": ev.signature } });
    const answers = await Promise.all([send(), send()]);
    expect(answers.map((r) => r.status)).toEqual([200, 200]);
    expect(answers.map((r) => r.body.data.duplicate).sort()).toEqual([false, true]);
    expect(await eventsOf(b.licenseId)).toEqual(["license.created", "license.suspended", "license.reinstated"]);
    expect(await eventsOf(c.licenseId)).toEqual(["license.created", "license.suspended"]);
    expect((await auditFor(t, b.licenseId)).filter((r) => r.action.startsWith("license.dispute_"))).toHaveLength(2);
  });

  test("a subscription invoice's payment is found through Stripe's invoice_payments (its PaymentIntent is not recorded)", async () => {
    const product = await makeProduct(t.deps, { name: "Acme Cloud" });
    const subPlan = await makePlan(t.deps, product.id, { licenseType: "subscription", purchasePriceId: "price_monthly" });
    const meta = { keyward_kind: "purchase", keyward_plan_id: subPlan.id };
    const [sub, invoice, email] = [`sub_${uid()}`, `in_${uid()}`, `buyer-${uid()}@example.com`];
    const periodEnd = Math.floor(Date.now() / 1000) + 30 * 86_400;
    const paid = await deliver("invoice.paid", {
      id: invoice,
      object: "invoice",
      customer: `cus_${uid()}`,
      customer_email: email,
      billing_reason: "subscription_create",
      status: "paid",
      amount_paid: 1500,
      amount_due: 1500,
      currency: "usd",
      parent: { type: "subscription_details", quote_details: null, subscription_details: { subscription: sub, metadata: meta } },
      lines: { object: "list", data: [{ id: `il_${uid()}`, object: "line_item", period: { start: periodEnd - 30 * 86_400, end: periodEnd } }] },
    });
    expect(paid.outcome).toBe("issued");
    const [license] = (await t.request("GET", `${V1}/admin/licenses?email=${encodeURIComponent(email)}`)).body.data.items as any[];
    expect(await payment(license.id)).toMatchObject({ kind: "purchase", stripeInvoiceId: invoice, stripePaymentIntentId: null });
    const b: Bought = { licenseId: license.id, paymentIntent: `pi_${uid()}`, charge: `ch_${uid()}` };
    fake.objects.set(`inpay_${invoice}`, { id: `inpay_${invoice}`, object: "invoice_payment", invoice, status: "paid", is_default: true, amount_paid: 1500, currency: "usd", payment: { type: "payment_intent", payment_intent: b.paymentIntent } });

    // Stripe refusing Keyward's key (401) is no answer about the payment: the event fails (5xx), is
    // not recorded, and Stripe's redelivery then applies it.
    fake.failNext("GET", "/v1/invoice_payments", 1, 401, { error: { type: "invalid_request_error", message: "Invalid API Key provided." } });
    const refused = await fake.signedEvent("charge.dispute.created", dispute(b, "needs_response", { amount: 1500 }));
    const failed = await t.request("POST", `${V1}/webhooks/stripe`, { body: refused.payload, raw: true, headers: { "stripe-signature": refused.signature } });
    expect(failed.status).toBeGreaterThanOrEqual(500);
    expect(await status(b.licenseId)).toBe("active");
    expect(await t.deps.repos.payments.eventOutcome(refused.id)).toBeNull();
    expect((await t.request("POST", `${V1}/webhooks/stripe`, { body: refused.payload, raw: true, headers: { "stripe-signature": refused.signature } })).body.data.outcome).toBe("suspended");
    expect(fake.callsTo("GET", "/v1/invoice_payments").some((c) => c.query["payment[payment_intent]"] === b.paymentIntent && c.query["payment[type]"] === "payment_intent")).toBe(true);
    expect((await deliver("charge.dispute.closed", dispute(b, "lost", { amount: 1500 }))).outcome).toBe("revoked");
    expect(await status(b.licenseId)).toBe("revoked");
    expect((await payment(b.licenseId)).disputeStatus).toBe("lost");
  });

  test("the close arriving before the open (Stripe does not order events): the license is not suspended afterwards", async () => {
    const b = await buy();
    expect((await deliver("charge.dispute.closed", dispute(b, "won"))).outcome).toBe("dispute_won");
    expect((await deliver("charge.dispute.created", dispute(b, "needs_response"))).outcome).toBe("ignored_already_closed");
    expect(await status(b.licenseId)).toBe("active");
    const c = await buy();
    expect((await deliver("charge.dispute.closed", dispute(c, "lost"))).outcome).toBe("revoked");
    expect((await deliver("charge.dispute.created", dispute(c, "needs_response"))).outcome).toBe("ignored_already_closed");
    expect((await payment(c.licenseId)).disputeStatus).toBe("lost");
    expect(await eventsOf(c.licenseId)).toEqual(["license.created", "license.revoked"]);
  });

  test("a closed event with a status that is not final is ignored", async () => {
    const b = await buy();
    await deliver("charge.dispute.created", dispute(b, "needs_response"));
    expect((await deliver("charge.dispute.closed", dispute(b, "under_review"))).outcome).toBe("ignored_dispute_status");
    expect(await status(b.licenseId)).toBe("suspended");
  });
});

describe("charge.refunded", () => {
  test("a full refund made in the Stripe dashboard is recorded and revokes the license as the refund route would", async () => {
    const b = await buy();
    const res = await deliver("charge.refunded", charge(b, { refunded: true, amountRefunded: 4900, refundIds: ["re_dash_1"] }));
    expect(res.outcome).toBe("refunded");
    expect(await status(b.licenseId)).toBe("revoked");
    expect(await payment(b.licenseId)).toMatchObject({ refundState: "refunded", stripeRefundId: "re_dash_1", refundedAt: t.clock.now() });
    const audit = await lastAudit(t, b.licenseId, "license.refund");
    expect(await actorsOf(b.licenseId, "license.refund")).toEqual([{ actor_type: "system", actor_id: "stripe" }]);
    expect(audit.changes).toMatchObject({ before: { status: "active" }, after: { status: "revoked" }, refund: { stripe_refund_id: "re_dash_1", amount: 4900, currency: "usd", stripe_charge_id: b.charge } });
    expect(await eventsOf(b.licenseId)).toEqual(["license.created", "license.revoked"]);

    // The refund route afterwards answers with the recorded refund and calls Stripe for no refund.
    const route = await t.request("POST", `${V1}/admin/licenses/${b.licenseId}/refund`);
    expect(route.status).toBe(200);
    expect(route.body.data.refund).toMatchObject({ stripe_refund_id: "re_dash_1", refunded_now: false });
    expect(fake.callsTo("POST", "/v1/refunds").filter((c) => c.body.payment_intent === b.paymentIntent)).toHaveLength(0);
    // A later event for the same charge (another refund event) changes nothing more.
    expect((await deliver("charge.refunded", charge(b, { refunded: true, amountRefunded: 4900, refundIds: ["re_dash_1"] }))).outcome).toBe("already_recorded");
    expect(await eventsOf(b.licenseId)).toEqual(["license.created", "license.revoked"]);
  });

  test("without the charge's refunds in the event the refund is recorded without an id", async () => {
    const b = await buy();
    const object: Record<string, unknown> = charge(b, { refunded: true, amountRefunded: 4900 });
    delete object.refunds;
    expect((await deliver("charge.refunded", object)).outcome).toBe("refunded");
    expect(await payment(b.licenseId)).toMatchObject({ refundState: "refunded", stripeRefundId: null });
  });

  test("the charge.refunded of Keyward's own refund changes nothing more (one license.revoked)", async () => {
    const b = await buy();
    const route = await t.request("POST", `${V1}/admin/licenses/${b.licenseId}/refund`);
    expect(route.status).toBe(200);
    const refundId = route.body.data.refund.stripe_refund_id as string;
    const res = await deliver("charge.refunded", charge(b, { refunded: true, amountRefunded: 4900, refundIds: [refundId] }));
    expect(res.outcome).toBe("already_recorded");
    expect(await eventsOf(b.licenseId)).toEqual(["license.created", "license.revoked"]);
    expect((await auditFor(t, b.licenseId)).filter((r) => r.action === "license.refund")).toHaveLength(1);
    expect((await payment(b.licenseId)).stripeRefundId).toBe(refundId);
  });

  test("a refund Keyward is still making (payment pending) is left to the refund route", async () => {
    const b = await buy();
    const p = await payment(b.licenseId);
    expect(await t.deps.repos.payments.claimRefund(p.id)).toBe(true);
    expect((await deliver("charge.refunded", charge(b, { refunded: true, amountRefunded: 4900, refundIds: ["re_x"] }))).outcome).toBe("already_recorded");
    expect(await status(b.licenseId)).toBe("active");
    expect((await payment(b.licenseId)).refundState).toBe("pending");
  });

  test("a partial refund is ignored: the license stays", async () => {
    const b = await buy();
    const res = await deliver("charge.refunded", charge(b, { refunded: false, amountRefunded: 1000, refundIds: ["re_part"] }));
    expect(res.outcome).toBe("ignored_partial_refund");
    expect(await status(b.licenseId)).toBe("active");
    expect(await payment(b.licenseId)).toMatchObject({ refundState: null, stripeRefundId: null });
    expect(await eventsOf(b.licenseId)).toEqual(["license.created"]);
  });
});
