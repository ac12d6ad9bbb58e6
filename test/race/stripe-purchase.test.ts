// Stripe purchase events delivered to several Keyward processes on one database at once, on each
// engine (SQLite file; PostgreSQL with TEST_DATABASE_URL). The event id is claimed in the
// transaction of its effect, and a purchase is claimed once more under its Checkout Session (one-time)
// or subscription id (purchase.ts claimPurchaseIssue): whichever node and event wins, the buyer gets
// ONE license, one payment row, one billing link, one license.created event and one key email, and
// Stripe never sees a 5xx (which it would retry). Rows are counted with SQL on the shared database.
// The same event id 30 times exercises the event-id claim; one purchase under several event ids
// exercises the purchase claim: without it, PostgreSQL transactions of different ids both find no
// billing link and issue (the unique billing link then fails one of them: a 5xx). SQLite runs one
// writer at a time and each transaction reads the link its predecessor committed, so a missing
// purchase claim shows on PostgreSQL only (a missing event-id claim shows on both: `duplicate`).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { engines } from "../contract/harness";
import { makePlan, makeProduct } from "../support/factories";
import { startFakeStripe, type FakeStripe } from "../support/fake-stripe";
import type { TestApp } from "../support/app";
import { newId } from "../../src/shared/ids";
import { all, tally, type RaceResult } from "./support";
import { startCluster, type Cluster } from "./cluster";

const NODES = 3;
const DAY_S = 86_400;

const nowS = () => Math.floor(Date.now() / 1000);
const uid = () => newId().replaceAll("-", "").slice(-12);

interface Signed {
  payload: string;
  signature: string;
}

async function deliver(url: string, ev: Signed): Promise<RaceResult> {
  const res = await fetch(`${url}/api/v1/webhooks/stripe`, {
    method: "POST",
    headers: { "content-type": "application/json; charset=utf-8", "stripe-signature": ev.signature },
    body: ev.payload,
  });
  return { status: res.status, body: await res.json(), headers: res.headers };
}

/** A paid one-time purchase's Checkout Session, as checkout.session.completed carries it. */
const paymentSession = (planId: string, sessionId: string, email: string) => ({
  id: sessionId,
  object: "checkout.session",
  mode: "payment",
  status: "complete",
  payment_status: "paid",
  metadata: { keyward_kind: "purchase", keyward_plan_id: planId },
  client_reference_id: null,
  customer: `cus_${uid()}`,
  customer_details: { email },
  payment_intent: `pi_${uid()}`,
  subscription: null,
  invoice: null,
  amount_total: 4900,
  currency: "usd",
});

/** The rows the purchase left for the buyer, counted on the shared database. */
async function rowsOf(t: TestApp, email: string) {
  const licenses = await t.exec<{ id: string; status: string }>("SELECT id, status FROM licenses WHERE email = $1", [email]);
  const payments = await t.exec<{ kind: string; stripe_checkout_session_id: string | null; stripe_invoice_id: string | null }>(
    "SELECT p.kind, p.stripe_checkout_session_id, p.stripe_invoice_id FROM payments p JOIN licenses l ON l.id = p.license_id WHERE l.email = $1",
    [email],
  );
  const links = await t.exec<{ stripe_customer_id: string | null; stripe_subscription_id: string | null; stripe_checkout_session_id: string | null }>(
    "SELECT b.stripe_customer_id, b.stripe_subscription_id, b.stripe_checkout_session_id FROM billing_links b JOIN licenses l ON l.id = b.license_id WHERE l.email = $1",
    [email],
  );
  const ids = licenses.map((l) => l.id);
  const outbox = await t.exec<{ kind: string; topic: string; payload: unknown }>(
    "SELECT kind, topic, payload FROM outbox WHERE topic IN ('license.created', 'license_purchased')",
  );
  const text = (p: unknown) => (typeof p === "string" ? p : JSON.stringify(p));
  const created = outbox.filter((r) => r.kind === "event" && r.topic === "license.created" && ids.some((id) => text(r.payload).includes(id)));
  const emails = outbox.filter((r) => r.kind === "email" && r.topic === "license_purchased" && text(r.payload).includes(email));
  return { licenses, payments, links, created, emails };
}

for (const engine of engines()) {
  describe(`Stripe purchases on ${NODES} nodes on ${engine}`, () => {
    let fake: FakeStripe;
    let c: Cluster;
    beforeAll(async () => {
      fake = await startFakeStripe();
      c = await startCluster(engine, NODES, fake.env());
    }, 60_000);
    afterAll(async () => {
      await c?.close();
      await fake?.stop();
    });

    test("the same one-time checkout.session.completed sent 30 times across the nodes at once issues one license", async () => {
      const product = await makeProduct(c.t.deps, { name: "Acme Editor" });
      const plan = await makePlan(c.t.deps, product.id, { licenseType: "perpetual", purchasePriceId: "price_once", supportDays: 365 });
      const email = `buyer-${uid()}@example.com`;
      const sessionId = `cs_test_${uid()}`;
      const ev = await fake.signedEvent("checkout.session.completed", paymentSession(plan.id, sessionId, email));
      const results = await all(30, (i) => deliver(c.url(i), ev));
      expect(tally(results)).toEqual({ 200: 30 });
      expect(results.filter((r) => r.body.data.duplicate === false)).toHaveLength(1);
      expect(results.every((r) => r.body.data.outcome === "issued")).toBe(true);

      const rows = await rowsOf(c.t, email);
      expect(rows.licenses).toHaveLength(1);
      expect(rows.licenses[0]!.status).toBe("active");
      expect(rows.payments).toEqual([{ kind: "purchase", stripe_checkout_session_id: sessionId, stripe_invoice_id: null }]);
      expect(rows.links).toHaveLength(1);
      expect(rows.links[0]!.stripe_checkout_session_id).toBe(sessionId);
      expect(rows.created).toHaveLength(1);
      expect(rows.emails).toHaveLength(1);
    });

    test("one one-time session under six event ids (completed, async_payment_succeeded), each sent 3 times at once, issues one license", async () => {
      // The event-id claim keeps each id to one application; the purchase claim (per Checkout
      // Session) keeps the six applications to one license. Several ids make transactions of
      // different ids overlap on PostgreSQL (SQLite runs one writer at a time anyway).
      const product = await makeProduct(c.t.deps, { name: "Acme Viewer" });
      const plan = await makePlan(c.t.deps, product.id, { licenseType: "perpetual", purchasePriceId: "price_viewer", supportDays: 365 });
      const email = `buyer-${uid()}@example.com`;
      const sessionId = `cs_test_${uid()}`;
      const object = paymentSession(plan.id, sessionId, email);
      const signed: Signed[] = [];
      for (let copy = 0; copy < 6; copy++) {
        signed.push(await fake.signedEvent(copy % 3 === 2 ? "checkout.session.async_payment_succeeded" : "checkout.session.completed", object));
      }
      const results = await all(18, (i) => deliver(c.url(Math.floor(i / signed.length) + i), signed[i % signed.length]!));
      expect(tally(results)).toEqual({ 200: 18 });
      const applied = results.filter((r) => r.body.data.duplicate === false);
      expect(applied).toHaveLength(signed.length);
      expect(applied.filter((r) => r.body.data.outcome === "issued")).toHaveLength(1);
      expect(applied.filter((r) => r.body.data.outcome === "ignored_already_issued")).toHaveLength(signed.length - 1);

      const rows = await rowsOf(c.t, email);
      expect(rows.licenses).toHaveLength(1);
      expect(rows.payments).toEqual([{ kind: "purchase", stripe_checkout_session_id: sessionId, stripe_invoice_id: null }]);
      expect(rows.links).toHaveLength(1);
      expect(rows.created).toHaveLength(1);
      expect(rows.emails).toHaveLength(1);
    });

    test("a subscription's three events, each sent 3 times under three event ids, interleaved across the nodes at once, issue one license", async () => {
      const product = await makeProduct(c.t.deps, { name: "Acme Cloud" });
      const plan = await makePlan(c.t.deps, product.id, { licenseType: "subscription", purchasePriceId: "price_monthly" });
      const email = `buyer-${uid()}@example.com`;
      const subscriptionId = `sub_${uid()}`;
      const customerId = `cus_${uid()}`;
      const invoiceId = `in_${uid()}`;
      const sessionId = `cs_test_${uid()}`;
      const meta = { keyward_kind: "purchase", keyward_plan_id: plan.id };
      const periodEnd = nowS() + 30 * DAY_S;
      const created = nowS() - 5;
      const session = {
        id: sessionId,
        object: "checkout.session",
        mode: "subscription",
        status: "complete",
        payment_status: "paid",
        metadata: meta,
        client_reference_id: null,
        customer: customerId,
        customer_details: { email },
        payment_intent: null,
        subscription: subscriptionId,
        invoice: invoiceId,
        amount_total: 1500,
        currency: "usd",
      };
      const subscription = {
        id: subscriptionId,
        object: "subscription",
        customer: customerId,
        status: "active",
        trial_end: null,
        cancel_at: null,
        ended_at: null,
        // The subscription carries the buyer's address: its events may come before the session's.
        metadata: { ...meta, keyward_email: email },
        items: { object: "list", data: [{ id: `si_${uid()}`, object: "subscription_item", current_period_start: periodEnd - 30 * DAY_S, current_period_end: periodEnd }] },
      };
      const invoice = {
        id: invoiceId,
        object: "invoice",
        customer: customerId,
        customer_email: email,
        billing_reason: "subscription_create",
        status: "paid",
        amount_paid: 1500,
        amount_due: 1500,
        currency: "usd",
        parent: { type: "subscription_details", quote_details: null, subscription_details: { subscription: subscriptionId, metadata: { ...meta, keyward_email: email } } },
        lines: { object: "list", data: [{ id: `il_${uid()}`, object: "line_item", period: { start: periodEnd - 30 * DAY_S, end: periodEnd } }] },
      };
      // Each event under three ids (Stripe's retry of one id, and the same state under other ids, so
      // the event-id claim alone cannot keep it to one license), each delivered 3 times: 27 requests.
      const signed: Signed[] = [];
      for (let copy = 0; copy < 3; copy++) {
        signed.push(
          await fake.signedEvent("checkout.session.completed", session, { created: created + 1 }),
          await fake.signedEvent("customer.subscription.created", subscription, { created }),
          await fake.signedEvent("invoice.paid", invoice, { created }),
        );
      }
      // Interleaved: request i sends event i mod 9 to a node that shifts with each round, so every
      // event reaches every node once.
      const results = await all(27, (i) => deliver(c.url(Math.floor(i / signed.length) + i), signed[i % signed.length]!));
      expect(tally(results)).toEqual({ 200: 27 });
      // Each event id is applied once (the other deliveries of it answer its recorded outcome), and
      // of the nine applications exactly one issued.
      const applied = results.filter((r) => r.body.data.duplicate === false);
      expect(applied).toHaveLength(signed.length);
      expect(applied.filter((r) => r.body.data.outcome === "issued")).toHaveLength(1);

      const rows = await rowsOf(c.t, email);
      expect(rows.licenses).toHaveLength(1);
      expect(rows.licenses[0]!.status).toBe("active");
      const license = await c.t.deps.repos.licenses.findById(rows.licenses[0]!.id);
      expect(license!.validUntil!.getTime()).toBe(periodEnd * 1000);
      expect(rows.links).toEqual([{ stripe_customer_id: customerId, stripe_subscription_id: subscriptionId, stripe_checkout_session_id: sessionId }]);
      expect(rows.payments).toHaveLength(1);
      expect(rows.payments[0]).toMatchObject({ kind: "purchase", stripe_invoice_id: invoiceId });
      expect(rows.created).toHaveLength(1);
      expect(rows.emails).toHaveLength(1);
    });
  });
}
