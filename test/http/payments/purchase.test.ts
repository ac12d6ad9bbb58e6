// Selling licenses and subscriptions through Stripe (docs/payments.md "Selling licenses",
// "Subscriptions"): the purchase checkout against the fake Stripe, and the effects of signed
// checkout.session.completed / customer.subscription.* / invoice.* events through the real webhook
// route — in every order Stripe may deliver them, repeated, stale, and for licenses an admin froze.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createTestApp, type TestApp } from "../../support/app";
import { startFakeStripe, type FakeStripe } from "../../support/fake-stripe";
import { startSmtpServer, type TestSmtpServer } from "../../support/smtp";
import { makePlan, makeProduct } from "../../support/factories";
import type { Plan } from "../../../src/modules/plans/repo";
import type { Product } from "../../../src/modules/products/repo";
import { newId } from "../../../src/shared/ids";
import { runExpiryChecks } from "../../support/expiry-checks";

const V1 = "/api/v1";
const DAY_S = 86_400;

let fake: FakeStripe;
let smtp: TestSmtpServer;
let t: TestApp;
let product: Product;

beforeAll(async () => {
  fake = await startFakeStripe();
  smtp = await startSmtpServer();
  t = await createTestApp({ env: { ...fake.env(), SMTP_URL: smtp.url, MAIL_FROM: "Acme <noreply@acme.example>" } });
  product = await makeProduct(t.deps, { name: "Acme Editor" });
});
afterAll(async () => {
  await t.close();
  await fake.stop();
  await smtp.stop();
});

const nowS = () => Math.floor(Date.now() / 1000);
const uid = () => newId().replaceAll("-", "").slice(-12);

async function deliver(type: string, object: Record<string, unknown>, opts: { id?: string; created?: number } = {}) {
  const ev = await fake.signedEvent(type, object, opts);
  const res = await t.request("POST", `${V1}/webhooks/stripe`, { body: ev.payload, raw: true, headers: { "stripe-signature": ev.signature } });
  expect(res.status).toBe(200);
  return { ...ev, outcome: res.body.data.outcome as string, duplicate: res.body.data.duplicate as boolean };
}

const purchaseMeta = (plan: Plan, email?: string) => ({ keyward_kind: "purchase", keyward_plan_id: plan.id, ...(email ? { keyward_email: email } : {}) });

function paymentSession(plan: Plan, email: string, over: Record<string, unknown> = {}) {
  return {
    id: `cs_test_${uid()}`,
    object: "checkout.session",
    mode: "payment",
    status: "complete",
    payment_status: "paid",
    metadata: purchaseMeta(plan),
    client_reference_id: null,
    customer: `cus_${uid()}`,
    customer_details: { email },
    payment_intent: `pi_${uid()}`,
    subscription: null,
    invoice: null,
    amount_total: 4900,
    currency: "usd",
    ...over,
  };
}

interface Sub {
  subscriptionId: string;
  customerId: string;
  invoiceId: string;
  sessionId: string;
  email: string;
  plan: Plan;
}

function newSub(plan: Plan): Sub {
  return { subscriptionId: `sub_${uid()}`, customerId: `cus_${uid()}`, invoiceId: `in_${uid()}`, sessionId: `cs_test_${uid()}`, email: `buyer-${uid()}@example.com`, plan };
}

const subscriptionSession = (s: Sub, over: Record<string, unknown> = {}) => ({
  ...paymentSession(s.plan, s.email),
  id: s.sessionId,
  mode: "subscription",
  customer: s.customerId,
  payment_intent: null,
  subscription: s.subscriptionId,
  invoice: s.invoiceId,
  amount_total: 1500,
  ...over,
});

const subscriptionObject = (s: Sub, status: string, periodEnd: number, over: Record<string, unknown> = {}) => ({
  id: s.subscriptionId,
  object: "subscription",
  customer: s.customerId,
  status,
  trial_end: null,
  cancel_at: null,
  ended_at: null,
  metadata: purchaseMeta(s.plan, s.email),
  items: { object: "list", data: [{ id: `si_${uid()}`, object: "subscription_item", current_period_start: periodEnd - 30 * DAY_S, current_period_end: periodEnd }] },
  ...over,
});

const invoiceObject = (s: Sub, o: { id?: string; reason: string; amount: number; periodEnd: number }) => ({
  id: o.id ?? s.invoiceId,
  object: "invoice",
  customer: s.customerId,
  customer_email: s.email,
  billing_reason: o.reason,
  status: "paid",
  amount_paid: o.amount,
  amount_due: o.amount,
  currency: "usd",
  parent: { type: "subscription_details", quote_details: null, subscription_details: { subscription: s.subscriptionId, metadata: purchaseMeta(s.plan, s.email) } },
  lines: { object: "list", data: [{ id: `il_${uid()}`, object: "line_item", period: { start: o.periodEnd - 30 * DAY_S, end: o.periodEnd } }] },
});

async function licensesOf(email: string) {
  const res = await t.request("GET", `${V1}/admin/licenses?email=${encodeURIComponent(email)}`);
  expect(res.status).toBe(200);
  return res.body.data.items as any[];
}

async function billing(licenseId: string) {
  const res = await t.request("GET", `${V1}/admin/licenses/${licenseId}/billing`);
  expect(res.status).toBe(200);
  return res.body.data;
}

async function eventsOf(licenseId: string): Promise<{ type: string; data: Record<string, any> }[]> {
  const rows = await t.exec<{ payload: unknown }>("SELECT payload FROM outbox WHERE kind = 'event' ORDER BY created_at, id");
  return rows
    .map((r) => (typeof r.payload === "string" ? JSON.parse(r.payload) : r.payload) as { type: string; data: Record<string, any> })
    .filter((p) => p.data.license_id === licenseId);
}

async function deliverOutbox() {
  return (await t.request("POST", `${V1}/admin/system/jobs/deliver-outbox/run`)).body.data.result;
}

const iso = (s: number) => new Date(s * 1000).toISOString();

describe("POST /license/checkout", () => {
  test("a perpetual plan: a payment-mode Checkout Session for its price, with Keyward's metadata and BASE_URL return pages", async () => {
    const plan = await makePlan(t.deps, product.id, { purchasePriceId: "price_perpetual" });
    const res = await t.request("POST", `${V1}/license/checkout`, { body: { plan_id: plan.id, email: "buyer@example.com" } });
    expect(res.status).toBe(200);
    expect(res.body.data.checkout_url).toMatch(/^https:\/\/checkout\.stripe\.test\/c\/pay\/cs_test_/);
    const call = fake.callsTo("POST", "/v1/checkout/sessions").at(-1)!;
    expect(call.body.mode).toBe("payment");
    expect(call.body.line_items).toEqual([{ price: "price_perpetual", quantity: "1" }]);
    expect(call.body.customer_email).toBe("buyer@example.com");
    expect(call.body.metadata).toEqual({ keyward_kind: "purchase", keyward_plan_id: plan.id });
    expect(call.body.subscription_data).toBeUndefined();
    const base = t.deps.config.baseUrl.replace(/\/+$/, "");
    expect(call.body.success_url).toBe(`${base}/checkout/success?session_id={CHECKOUT_SESSION_ID}`);
    expect(call.body.cancel_url).toBe(`${base}/checkout/cancel`);
    expect(call.body.customer_creation).toBe("always");
    // A double click opens one session: the same request within the minute gets the same URL.
    const again = await t.request("POST", `${V1}/license/checkout`, { body: { plan_id: plan.id, email: "buyer@example.com" } });
    expect(again.body.data.checkout_url).toBe(res.body.data.checkout_url);
  });

  test("a subscription plan: subscription mode with the plan's trial and the metadata on the subscription too", async () => {
    const plan = await makePlan(t.deps, product.id, { licenseType: "subscription", purchasePriceId: "price_monthly", purchaseTrialDays: 14 });
    const res = await t.request("POST", `${V1}/license/checkout`, { body: { plan_id: plan.id, email: " sub@example.com" } });
    expect(res.status).toBe(400); // not an email address (leading space)
    const ok = await t.request("POST", `${V1}/license/checkout`, { body: { plan_id: plan.id, email: "sub@example.com" } });
    expect(ok.status).toBe(200);
    const call = fake.callsTo("POST", "/v1/checkout/sessions").at(-1)!;
    expect(call.body.mode).toBe("subscription");
    expect(call.body.line_items).toEqual([{ price: "price_monthly", quantity: "1" }]);
    expect(call.body.subscription_data).toEqual({
      trial_period_days: "14",
      metadata: { keyward_kind: "purchase", keyward_plan_id: plan.id, keyward_email: "sub@example.com" },
    });
    // Without trial days, no trial.
    const noTrial = await makePlan(t.deps, product.id, { licenseType: "subscription", purchasePriceId: "price_monthly" });
    await t.request("POST", `${V1}/license/checkout`, { body: { plan_id: noTrial.id, email: "sub@example.com" } });
    expect(fake.callsTo("POST", "/v1/checkout/sessions").at(-1)!.body.subscription_data.trial_period_days).toBeUndefined();
  });

  test("404 PLAN_NOT_FOUND, 503 PURCHASE_NOT_AVAILABLE (no price, trial plan, no Stripe), 502 when Stripe fails, 400 bad input", async () => {
    const calls = fake.callsTo("POST", "/v1/checkout/sessions").length;
    const unknown = await t.request("POST", `${V1}/license/checkout`, { body: { plan_id: newId(), email: "a@example.com" } });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe("PLAN_NOT_FOUND");
    const unpriced = await makePlan(t.deps, product.id);
    const noPrice = await t.request("POST", `${V1}/license/checkout`, { body: { plan_id: unpriced.id, email: "a@example.com" } });
    expect(noPrice.status).toBe(503);
    expect(noPrice.body.error.code).toBe("PURCHASE_NOT_AVAILABLE");
    const trialPlan = await makePlan(t.deps, product.id, { licenseType: "trial", purchasePriceId: "price_x" });
    const trial = await t.request("POST", `${V1}/license/checkout`, { body: { plan_id: trialPlan.id, email: "a@example.com" } });
    expect(trial.status).toBe(503);
    expect(trial.body.error.code).toBe("PURCHASE_NOT_AVAILABLE");
    expect(fake.callsTo("POST", "/v1/checkout/sessions").length).toBe(calls);

    const priced = await makePlan(t.deps, product.id, { purchasePriceId: "price_y" });
    fake.failNext("POST", "/v1/checkout/sessions", 3, 500);
    const down = await t.request("POST", `${V1}/license/checkout`, { body: { plan_id: priced.id, email: "a@example.com" } });
    expect(down.status).toBe(502);
    expect(down.body.error.code).toBe("PAYMENT_PROVIDER_ERROR");

    for (const body of [{ plan_id: priced.id }, { plan_id: priced.id, email: "not-an-email" }, { plan_id: "x", email: "a@example.com" }, { plan_id: priced.id, email: "a@example.com", extra: 1 }]) {
      const bad = await t.request("POST", `${V1}/license/checkout`, { body });
      expect(bad.status).toBe(400);
      expect(bad.body.error.code).toBe("VALIDATION_ERROR");
    }

    const off = await createTestApp();
    try {
      const p = await makePlan(off.deps, (await makeProduct(off.deps)).id, { purchasePriceId: "price_z" });
      const res = await off.request("POST", `${V1}/license/checkout`, { body: { plan_id: p.id, email: "a@example.com" } });
      expect(res.status).toBe(503);
      expect(res.body.error.code).toBe("PURCHASE_NOT_AVAILABLE");
    } finally {
      await off.close();
    }
  });
});

describe("purchase of a perpetual license", () => {
  test("a paid checkout issues one license, emails its key (which activates), and records the payment and the link", async () => {
    const plan = await makePlan(t.deps, product.id, { name: "Pro", purchasePriceId: "price_pro", supportDays: 365 });
    const email = `buyer-${uid()}@example.com`;
    const session = paymentSession(plan, email);
    const first = await deliver("checkout.session.completed", session);
    expect(first.outcome).toBe("issued");
    // The same event again, and another event for the same session (a delayed method's follow-up), act once.
    expect((await deliver("checkout.session.completed", session, { id: first.id })).duplicate).toBe(true);
    expect((await deliver("checkout.session.async_payment_succeeded", session)).outcome).toBe("ignored_already_issued");

    const licenses = await licensesOf(email);
    expect(licenses).toHaveLength(1);
    const license = licenses[0];
    expect(license).toMatchObject({ plan_id: plan.id, status: "active", valid_until: null });
    expect(new Date(license.support_until).getTime()).toBe(t.clock.now().getTime() + 365 * DAY_S * 1000);

    const b = await billing(license.id);
    expect(b.link).toMatchObject({ stripe_customer_id: session.customer, stripe_subscription_id: null, stripe_checkout_session_id: session.id, subscription_status: null });
    expect(b.payments).toHaveLength(1);
    expect(b.payments[0]).toMatchObject({ kind: "purchase", stripe_checkout_session_id: session.id, stripe_payment_intent_id: session.payment_intent, amount: 4900, currency: "usd", refund_state: null });

    const events = await eventsOf(license.id);
    expect(events.map((e) => e.type)).toEqual(["license.created"]);
    const audit = await t.exec<{ actor_type: string; actor_id: string }>("SELECT actor_type, actor_id FROM audit_log WHERE action = 'license.issue' AND entity_id = $1", [license.id]);
    expect(audit).toEqual([{ actor_type: "system", actor_id: "stripe" }]);

    await deliverOutbox();
    const mails = smtp.received.filter((m) => m.envelope.to[0] === email);
    expect(mails).toHaveLength(1);
    expect(mails[0]!.subject).toContain("Acme Editor");
    const key = mails[0]!.text.match(/[A-Z0-9]+(?:-[A-Z0-9]{4,})+/)?.[0];
    expect(key).toBeDefined();
    const activated = await t.request("POST", `${V1}/license/activate`, { body: { license_key: key, identifier: "laptop-1" } });
    expect(activated.status).toBe(200);
    expect(activated.body.data.license_id ?? activated.body.data.license?.id ?? license.id).toBe(license.id);
    // The key is not in the outbox row in the clear.
    const rows = await t.exec<{ payload: unknown }>("SELECT payload FROM outbox WHERE kind = 'email' AND topic = 'license_purchased'");
    expect(rows.some((r) => JSON.stringify(r.payload).includes(key!))).toBe(false);
  });

  test("an unpaid session (delayed payment method) issues nothing until async_payment_succeeded", async () => {
    const plan = await makePlan(t.deps, product.id, { purchasePriceId: "price_pro" });
    const email = `late-${uid()}@example.com`;
    const session = paymentSession(plan, email, { payment_status: "unpaid" });
    expect((await deliver("checkout.session.completed", session)).outcome).toBe("ignored_unpaid");
    expect(await licensesOf(email)).toHaveLength(0);
    expect((await deliver("checkout.session.async_payment_succeeded", { ...session, payment_status: "paid" })).outcome).toBe("issued");
    expect(await licensesOf(email)).toHaveLength(1);
  });
});

describe("subscriptions", () => {
  const permutations = <T>(xs: T[]): T[][] => (xs.length <= 1 ? [xs] : xs.flatMap((x, i) => permutations([...xs.slice(0, i), ...xs.slice(i + 1)]).map((p) => [x, ...p])));

  test("checkout.session.completed, customer.subscription.created and invoice.paid in every order end in the same state", async () => {
    const plan = await makePlan(t.deps, product.id, { licenseType: "subscription", purchasePriceId: "price_monthly" });
    for (const order of permutations(["session", "subscription", "invoice"])) {
      const s = newSub(plan);
      const periodEnd = nowS() + 30 * DAY_S;
      const created = nowS() - 10;
      const events: Record<string, () => Promise<unknown>> = {
        // Stripe's own times: subscription and invoice first, the session completes a second later.
        session: () => deliver("checkout.session.completed", subscriptionSession(s), { created: created + 1 }),
        subscription: () => deliver("customer.subscription.created", subscriptionObject(s, "active", periodEnd), { created }),
        invoice: () => deliver("invoice.paid", invoiceObject(s, { reason: "subscription_create", amount: 1500, periodEnd }), { created }),
      };
      for (const name of order) await events[name]!();
      // And each again under a new event id (Stripe's retries reuse the id; other events repeat the state).
      for (const name of order) await events[name]!();

      const licenses = await licensesOf(s.email);
      expect({ order, count: licenses.length }).toEqual({ order, count: 1 });
      const license = licenses[0];
      expect({ order, status: license.status, valid_until: license.valid_until, support_until: license.support_until }).toEqual({
        order,
        status: "active",
        valid_until: iso(periodEnd),
        support_until: null,
      });
      const b = await billing(license.id);
      expect(b.link).toMatchObject({ stripe_customer_id: s.customerId, stripe_subscription_id: s.subscriptionId, stripe_checkout_session_id: s.sessionId });
      expect(b.payments).toHaveLength(1);
      expect(b.payments[0]).toMatchObject({ kind: "purchase", stripe_invoice_id: s.invoiceId, amount: 1500 });
      const types = (await eventsOf(license.id)).map((e) => e.type);
      expect({ order, created: types.filter((x) => x === "license.created").length }).toEqual({ order, created: 1 });
      expect(types).not.toContain("license.renewed");
      const mails = await t.exec<{ payload: unknown }>("SELECT payload FROM outbox WHERE kind = 'email' AND topic = 'license_purchased'");
      expect(mails.filter((m) => JSON.stringify(m.payload).includes(s.email))).toHaveLength(1);
    }
  });

  test("a trial: trialing until trial_end, the first paid invoice makes it active and renews", async () => {
    const plan = await makePlan(t.deps, product.id, { licenseType: "subscription", purchasePriceId: "price_monthly", purchaseTrialDays: 14 });
    for (const order of permutations(["session", "subscription", "invoice"])) {
      const s = newSub(plan);
      // The trial ends 14 days after the app's clock: a session-first issue estimates exactly this.
      const trialEnd = Math.floor(t.clock.nowMs() / 1000) + 14 * DAY_S;
      const created = nowS() - 100;
      const events: Record<string, () => Promise<unknown>> = {
        session: () => deliver("checkout.session.completed", subscriptionSession(s, { payment_status: "no_payment_required", amount_total: 0 }), { created: created + 1 }),
        subscription: () => deliver("customer.subscription.created", subscriptionObject(s, "trialing", trialEnd, { trial_end: trialEnd }), { created }),
        invoice: () => deliver("invoice.paid", invoiceObject(s, { reason: "subscription_create", amount: 0, periodEnd: trialEnd }), { created }),
      };
      for (const name of order) await events[name]!();
      const [license] = await licensesOf(s.email);
      expect({ order, status: license.status }).toEqual({ order, status: "trialing" });
      // valid_until is the trial's end, whichever event set it.
      expect(license.valid_until).toBe(iso(trialEnd));
      expect((await billing(license.id)).payments).toHaveLength(0); // nothing was paid yet

      // The trial ends: Stripe charges the first period.
      const periodEnd = trialEnd + 30 * DAY_S;
      const paid = await deliver("invoice.paid", invoiceObject(s, { id: `in_${uid()}`, reason: "subscription_cycle", amount: 1500, periodEnd }), { created: created + 2 });
      expect(paid.outcome).toBe("renewed");
      const [after] = await licensesOf(s.email);
      expect(after).toMatchObject({ status: "active", valid_until: iso(periodEnd) });
      const renewed = (await eventsOf(license.id)).filter((e) => e.type === "license.renewed");
      expect(renewed).toHaveLength(1);
      expect(renewed[0]!.data).toMatchObject({ status: "active", valid_until: iso(periodEnd), previous_status: "trialing" });
      expect((await billing(license.id)).payments.map((p: any) => p.kind)).toEqual(["subscription"]);
    }
  });

  test("the three events arriving at once (concurrent transactions) issue one license and all apply (no 5xx)", async () => {
    const plan = await makePlan(t.deps, product.id, { licenseType: "subscription", purchasePriceId: "price_monthly" });
    const s = newSub(plan);
    const periodEnd = nowS() + 30 * DAY_S;
    const created = nowS() - 5;
    const signed = await Promise.all([
      fake.signedEvent("checkout.session.completed", subscriptionSession(s), { created: created + 1 }),
      fake.signedEvent("customer.subscription.created", subscriptionObject(s, "active", periodEnd), { created }),
      fake.signedEvent("invoice.paid", invoiceObject(s, { reason: "subscription_create", amount: 1500, periodEnd }), { created }),
    ]);
    const send = (ev: { payload: string; signature: string }) =>
      t.request("POST", `${V1}/webhooks/stripe`, { body: ev.payload, raw: true, headers: { "stripe-signature": ev.signature } });
    // Each transaction takes the license row before its link and payments, and the first to claim
    // the purchase issues: no deadlock, no unique violation, so no 5xx for Stripe to retry.
    const answers = await Promise.all(signed.map(send));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
    expect(answers.map((a) => a.body.data.outcome)).toContain("issued");
    const licenses = await licensesOf(s.email);
    expect(licenses).toHaveLength(1);
    expect(licenses[0]).toMatchObject({ status: "active", valid_until: iso(periodEnd) });
    const b = await billing(licenses[0].id);
    expect(b.link).toMatchObject({ stripe_subscription_id: s.subscriptionId, stripe_checkout_session_id: s.sessionId });
    expect(b.payments).toHaveLength(1);
  });

  async function activeSubscription() {
    const plan = await makePlan(t.deps, product.id, { licenseType: "subscription", purchasePriceId: "price_monthly" });
    const s = newSub(plan);
    const periodEnd = nowS() + 30 * DAY_S;
    const created = nowS() - 1000;
    await deliver("checkout.session.completed", subscriptionSession(s), { created });
    await deliver("invoice.paid", invoiceObject(s, { reason: "subscription_create", amount: 1500, periodEnd }), { created });
    const [license] = await licensesOf(s.email);
    return { s, license, periodEnd, created };
  }

  test("renewal, payment failure, recovery and deletion keep status and valid_until in step, each with its event", async () => {
    const { s, license, periodEnd, created } = await activeSubscription();
    // Cycle 2 paid: extended, license.renewed, payment recorded once.
    const end2 = periodEnd + 30 * DAY_S;
    const inv2 = invoiceObject(s, { id: `in_${uid()}`, reason: "subscription_cycle", amount: 1500, periodEnd: end2 });
    const renewed = await deliver("invoice.paid", inv2, { created: created + 10 });
    expect(renewed.outcome).toBe("renewed");
    expect((await deliver("invoice.paid", inv2, { id: renewed.id, created: created + 10 })).duplicate).toBe(true);
    expect((await licensesOf(s.email))[0]).toMatchObject({ status: "active", valid_until: iso(end2) });

    // Cycle 3 fails: past_due, valid_until unchanged.
    const end3 = end2 + 30 * DAY_S;
    const inv3 = { ...invoiceObject(s, { id: `in_${uid()}`, reason: "subscription_cycle", amount: 0, periodEnd: end3 }), status: "open", amount_due: 1500 };
    expect((await deliver("invoice.payment_failed", inv3, { created: created + 20 })).outcome).toBe("past_due");
    expect((await licensesOf(s.email))[0]).toMatchObject({ status: "past_due", valid_until: iso(end2) });
    const [row] = await t.exec<{ past_due_since: unknown }>("SELECT past_due_since FROM licenses WHERE id = $1", [license.id]);
    expect(row!.past_due_since).not.toBeNull();
    // The subscription's own update says the same (past_due): nothing more changes.
    expect((await deliver("customer.subscription.updated", subscriptionObject(s, "past_due", end3), { created: created + 21 })).outcome).toBe("unchanged");

    // The retry succeeds: active again, extended, past_due episode closed.
    const paid3 = await deliver("invoice.paid", { ...inv3, status: "paid", amount_paid: 1500 }, { created: created + 30 });
    expect(paid3.outcome).toBe("renewed");
    expect((await licensesOf(s.email))[0]).toMatchObject({ status: "active", valid_until: iso(end3) });
    const [cleared] = await t.exec<{ past_due_since: unknown }>("SELECT past_due_since FROM licenses WHERE id = $1", [license.id]);
    expect(cleared!.past_due_since).toBeNull();

    // A stale subscription event (older than the last one applied) does not undo it.
    expect((await deliver("customer.subscription.updated", subscriptionObject(s, "past_due", end3), { created: created + 25 })).outcome).toBe("ignored_stale");
    expect((await licensesOf(s.email))[0].status).toBe("active");

    // Deleted: canceled, license.canceled, once.
    const deleted = await deliver("customer.subscription.deleted", subscriptionObject(s, "canceled", end3, { ended_at: created + 40 }), { created: created + 40 });
    expect(deleted.outcome).toBe("canceled");
    expect((await deliver("customer.subscription.deleted", subscriptionObject(s, "canceled", end3), { created: created + 41 })).outcome).toBe("unchanged");
    // A late paid invoice does not revive a canceled license.
    await deliver("invoice.paid", invoiceObject(s, { id: `in_${uid()}`, reason: "subscription_cycle", amount: 1500, periodEnd: end3 + 30 * DAY_S }), { created: created + 50 });
    expect((await licensesOf(s.email))[0].status).toBe("canceled");

    const types = (await eventsOf(license.id)).map((e) => e.type);
    expect(types.filter((x) => x === "license.renewed")).toHaveLength(3);
    expect(types.filter((x) => x === "license.canceled")).toHaveLength(1);
    const updated = (await eventsOf(license.id)).filter((e) => e.type === "license.updated");
    expect(updated.map((e) => [e.data.status, e.data.changed])).toContainEqual(["past_due", ["status"]]);
    const canceled = (await eventsOf(license.id)).find((e) => e.type === "license.canceled")!;
    expect(canceled.data).toMatchObject({ status: "canceled", previous_status: "active" });

    const b = await billing(license.id);
    expect(b.link.subscription_status).toBe("canceled");
    expect(b.payments.map((p: any) => [p.kind, p.amount])).toEqual([
      ["subscription", 1500],
      ["subscription", 1500],
      ["subscription", 1500],
      ["purchase", 1500],
    ]);
    const audit = await t.exec<{ action: string; actor_id: string }>("SELECT action, actor_id FROM audit_log WHERE entity_id = $1 ORDER BY created_at, id", [license.id]);
    expect(audit.every((a) => a.actor_id === "stripe")).toBe(true);
    expect(audit.map((a) => a.action)).toContain("license.billing.payment_failed");
    expect(audit.map((a) => a.action)).toContain("license.billing.subscription_deleted");
  });

  test("admin decisions win: a suspended license stays suspended, a revoked one is not touched; the link records Stripe's state", async () => {
    const a = await activeSubscription();
    expect((await t.request("POST", `${V1}/admin/licenses/${a.license.id}/suspend`)).status).toBe(200);
    await deliver("invoice.payment_failed", invoiceObject(a.s, { id: `in_${uid()}`, reason: "subscription_cycle", amount: 0, periodEnd: a.periodEnd + 30 * DAY_S }), { created: a.created + 5 });
    expect((await licensesOf(a.s.email))[0].status).toBe("suspended");
    // Reinstating returns it to what the subscription says meanwhile (past_due).
    expect((await t.request("POST", `${V1}/admin/licenses/${a.license.id}/reinstate`)).body.data.status).toBe("past_due");

    const b = await activeSubscription();
    expect((await t.request("POST", `${V1}/admin/licenses/${b.license.id}/revoke`)).status).toBe(200);
    const end = b.periodEnd + 30 * DAY_S;
    expect((await deliver("invoice.paid", invoiceObject(b.s, { id: `in_${uid()}`, reason: "subscription_cycle", amount: 1500, periodEnd: end }), { created: b.created + 5 })).outcome).toBe("ignored_revoked");
    expect((await deliver("customer.subscription.deleted", subscriptionObject(b.s, "canceled", end), { created: b.created + 6 })).outcome).toBe("ignored_revoked");
    expect((await licensesOf(b.s.email))[0]).toMatchObject({ status: "revoked", valid_until: iso(b.periodEnd) });
    expect((await billing(b.license.id)).link.subscription_status).toBe("canceled");
  });

  test("events of a subscription Keyward did not sell are acknowledged and ignored", async () => {
    const plan = await makePlan(t.deps, product.id, { licenseType: "subscription" });
    const foreign = { ...newSub(plan) };
    const sub = { ...subscriptionObject(foreign, "active", nowS() + DAY_S), metadata: {} };
    const inv = invoiceObject(foreign, { reason: "subscription_cycle", amount: 900, periodEnd: nowS() + DAY_S });
    inv.parent.subscription_details.metadata = {} as any;
    expect((await deliver("customer.subscription.updated", sub)).outcome).toBe("ignored_unknown_subscription");
    expect((await deliver("customer.subscription.deleted", sub)).outcome).toBe("ignored_unknown_subscription");
    expect((await deliver("invoice.paid", inv)).outcome).toBe("ignored_unknown_subscription");
    expect((await deliver("invoice.payment_failed", inv)).outcome).toBe("ignored_unknown_subscription");
    // A one-off invoice (no subscription) is not a subscription event.
    expect((await deliver("invoice.paid", { ...inv, parent: null })).outcome).toBe("ignored_not_subscription_invoice");
    expect(await licensesOf(foreign.email)).toHaveLength(0);
  });
});

describe("GET /admin/licenses/{id}/billing", () => {
  test("a license not sold through Stripe has no link and no payments; an unknown license is 404", async () => {
    const plan = await makePlan(t.deps, product.id);
    const issued = await t.request("POST", `${V1}/admin/licenses`, { body: { product_id: product.id, plan_id: plan.id, email: "manual@example.com" } });
    expect(issued.status).toBe(201);
    const id = issued.body.data.id ?? issued.body.data.license?.id;
    expect(await billing(id)).toEqual({ license_id: id, link: null, payments: [] });
    const missing = await t.request("GET", `${V1}/admin/licenses/${newId()}/billing`);
    expect(missing.status).toBe(404);
    const readKey = await t.apiKey(["read"]);
    expect((await t.request("GET", `${V1}/admin/licenses/${id}/billing`, { key: readKey })).status).toBe(200);
  });
});

describe("lifecycle pass and subscriptions", () => {
  test("no expiry reminders for a license whose Stripe subscription renews by itself; a license without one still gets them", async () => {
    const plan = await makePlan(t.deps, product.id, { licenseType: "subscription", purchasePriceId: "price_monthly" });
    const s = newSub(plan);
    const end = Math.floor(t.clock.now().getTime() / 1000) + 3 * DAY_S;
    await deliver("checkout.session.completed", subscriptionSession(s));
    await deliver("invoice.paid", invoiceObject(s, { reason: "subscription_create", amount: 1500, periodEnd: end }));
    const [subscribed] = await licensesOf(s.email);
    expect(subscribed.valid_until).toBe(iso(end));
    const manual = await t.request("POST", `${V1}/admin/licenses`, {
      body: { product_id: product.id, plan_id: plan.id, email: `manual-${uid()}@example.com`, valid_until: iso(end) },
    });
    expect(manual.status).toBe(201);
    const manualId = manual.body.data.id;

    await runExpiryChecks(t);
    const reminders = (await t.exec<{ payload: unknown }>("SELECT payload FROM outbox WHERE kind = 'email' AND topic = 'expiry_reminder'")).map(
      (r) => ((typeof r.payload === "string" ? JSON.parse(r.payload) : r.payload) as { data: { license_id: string } }).data.license_id,
    );
    expect(reminders).toContain(manualId);
    expect(reminders).not.toContain(subscribed.id);

    // Once the subscription is past due, the license no longer renews by itself: dunning, not silence.
    await deliver("invoice.payment_failed", invoiceObject(s, { id: `in_${uid()}`, reason: "subscription_cycle", amount: 0, periodEnd: end + 30 * DAY_S }));
    expect((await billing(subscribed.id)).link.subscription_status).toBe("past_due");
  });
});

describe("lifecycle pass and a live subscription past its end", () => {
  test("the pass waits 2 days for Stripe's word (invoice.paid or payment_failed) before it expires the license", async () => {
    const plan = await makePlan(t.deps, product.id, { licenseType: "subscription", purchasePriceId: "price_monthly", purchaseTrialDays: 14 });
    const s = newSub(plan);
    const start = t.clock.nowMs();
    const trialEnd = Math.floor(start / 1000) + 14 * DAY_S;
    const runPass = () => runExpiryChecks(t);
    try {
      await deliver("checkout.session.completed", subscriptionSession(s, { payment_status: "no_payment_required", amount_total: 0 }));
      await deliver("customer.subscription.created", subscriptionObject(s, "trialing", trialEnd, { trial_end: trialEnd }));
      const [license] = await licensesOf(s.email);
      expect(license).toMatchObject({ status: "trialing", valid_until: iso(trialEnd) });

      // An hour past the trial's end Stripe is still charging the first period: no expiry yet.
      t.clock.set((trialEnd + 3600) * 1000);
      await runPass();
      expect((await licensesOf(s.email))[0]).toMatchObject({ status: "trialing" });
      const periodEnd = trialEnd + 30 * DAY_S;
      await deliver("invoice.paid", invoiceObject(s, { id: `in_${uid()}`, reason: "subscription_cycle", amount: 1500, periodEnd }));
      expect((await licensesOf(s.email))[0]).toMatchObject({ status: "active", valid_until: iso(periodEnd) });
      expect((await eventsOf(license.id)).map((e) => e.type)).not.toContain("license.expired");

      // The next renewal never arrives (webhooks lost): the license still expires, 2 days late.
      t.clock.set((periodEnd + 2 * DAY_S - 60) * 1000);
      await runPass();
      expect((await licensesOf(s.email))[0]).toMatchObject({ status: "active" });
      t.clock.set((periodEnd + 2 * DAY_S + 60) * 1000);
      await runPass();
      expect((await licensesOf(s.email))[0]).toMatchObject({ status: "expired" });
      expect((await eventsOf(license.id)).filter((e) => e.type === "license.expired")).toHaveLength(1);
    } finally {
      t.clock.set(start);
    }
  });
});

describe("purchase, then refund", () => {
  test("a one-time purchase is refunded through its payment intent and revoked", async () => {
    const plan = await makePlan(t.deps, product.id, { purchasePriceId: "price_pro" });
    const email = `refund-${uid()}@example.com`;
    const session = paymentSession(plan, email);
    expect((await deliver("checkout.session.completed", session)).outcome).toBe("issued");
    const [license] = await licensesOf(email);
    const res = await t.request("POST", `${V1}/admin/licenses/${license.id}/refund`);
    expect(res.status).toBe(200);
    expect(res.body.data.status).toBe("revoked");
    expect(fake.callsTo("POST", "/v1/refunds").filter((c) => c.body.payment_intent === session.payment_intent && !c.replayed)).toHaveLength(1);
    expect((await billing(license.id)).payments[0]).toMatchObject({ kind: "purchase", refund_state: "refunded" });
  });

  test("a subscription purchase: the first invoice is refunded, the subscription canceled, and its deletion event leaves the license revoked", async () => {
    const plan = await makePlan(t.deps, product.id, { licenseType: "subscription", purchasePriceId: "price_monthly" });
    const s = newSub(plan);
    const periodEnd = nowS() + 30 * DAY_S;
    await deliver("checkout.session.completed", subscriptionSession(s));
    await deliver("invoice.paid", invoiceObject(s, { reason: "subscription_create", amount: 1500, periodEnd }));
    fake.objects.set(s.subscriptionId, subscriptionObject(s, "active", periodEnd));
    fake.objects.set(`inpay_${s.invoiceId}`, {
      id: `inpay_${s.invoiceId}`,
      object: "invoice_payment",
      invoice: s.invoiceId,
      status: "paid",
      is_default: true,
      amount_paid: 1500,
      currency: "usd",
      payment: { type: "payment_intent", payment_intent: `pi_for_${s.invoiceId}` },
    });
    const [license] = await licensesOf(s.email);
    const res = await t.request("POST", `${V1}/admin/licenses/${license.id}/refund`);
    expect(res.status).toBe(200);
    expect(res.body.data.refund).toMatchObject({ kind: "purchase", amount: 1500, subscription_canceled: true });
    expect(fake.callsTo("POST", "/v1/refunds").some((c) => c.body.payment_intent === `pi_for_${s.invoiceId}`)).toBe(true);
    // Stripe then reports the cancellation: the license stays revoked, the link records it.
    expect((await deliver("customer.subscription.deleted", fake.objects.get(s.subscriptionId))).outcome).toBe("ignored_revoked");
    expect((await licensesOf(s.email))[0].status).toBe("revoked");
    expect((await billing(license.id)).link.subscription_status).toBe("canceled");
  });
});
