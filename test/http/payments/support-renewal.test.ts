// Support renewals end to end (spec: License rule 5): POST /license/support/checkout opens a Stripe
// Checkout Session at the local fake Stripe, and a signed checkout.session.completed delivered to
// POST /webhooks/stripe extends support_until once — however often it is delivered, and on two nodes
// at once — writes license.support_renewed (delivered to a webhook receiver, verified with
// standardwebhooks) and the confirmation email (received by a real SMTP server). SQLite, and
// PostgreSQL with KEYWARD_TEST_ENGINE=postgres.
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { Webhook } from "standardwebhooks";
import { createTestApp, type TestApp } from "../../support/app";
import { startFakeStripe, type FakeStripe } from "../../support/fake-stripe";
import { makeLicense, makePlan, makeProduct } from "../../support/factories";
import { startSmtpServer } from "../../support/smtp";
import { startWebhookReceiver } from "../../support/webhook-receiver";
import { DAY, fixedClock } from "../../../src/shared/clock";
import type { Plan } from "../../../src/modules/plans/repo";
import type { LicensePatch } from "../../../src/modules/licenses/repo";
import { changeLicenseNow } from "../../support/license-change";

const V1 = "/api/v1";
const PRICE = "price_support_1y";

let fake: FakeStripe;
beforeAll(async () => {
  fake = await startFakeStripe();
});
afterAll(() => fake.stop());

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  while (cleanup.length) await cleanup.pop()!();
});

async function app(env: Record<string, string> = fake.env(), opts: { sameDatabaseAs?: TestApp } = {}): Promise<TestApp> {
  // The real time: Stripe signatures and webhook-timestamp are checked against it. A second node
  // shares the first one's database, master key and clock.
  const other = opts.sameDatabaseAs;
  const t = await createTestApp({
    env: { WEBHOOK_ALLOW_PRIVATE: "true", ...env, ...(other ? { RELEASE_KEY_ENCRYPTION_KEY: other.deps.config.masterKeyHex! } : {}) },
    clock: other?.clock ?? fixedClock(Date.now()),
    ...opts,
  });
  cleanup.push(() => t.close());
  return t;
}

async function license(t: TestApp, plan: Partial<Plan> = {}, input: { supportUntil?: Date | null; email?: string } = {}) {
  const product = await makeProduct(t.deps, { name: "Acme Editor" });
  const p = await makePlan(t.deps, product.id, { name: "Pro", supportRenewalPriceId: PRICE, supportDays: 365, ...plan });
  const supportUntil = "supportUntil" in input ? input.supportUntil : new Date(t.clock.now().getTime() + 30 * DAY);
  return await makeLicense(t.deps, { productId: product.id, planId: p.id, ...input, supportUntil });
}

const patch = (t: TestApp, id: string, p: LicensePatch) => changeLicenseNow(t.deps, id, () => p, t.clock.now(), () => ({}));
const supportUntil = async (t: TestApp, id: string) => (await t.deps.repos.licenses.findById(id))!.supportUntil;

const checkout = (t: TestApp, body: unknown) => t.request("POST", `${V1}/license/support/checkout`, { body });

let seq = 0;
/** A paid renewal Checkout Session as Stripe sends it in checkout.session.completed. */
function paidSession(licenseId: string, over: Record<string, unknown> = {}) {
  seq += 1;
  return {
    id: `cs_test_renewal_${seq}_${Math.random().toString(36).slice(2, 8)}`,
    object: "checkout.session",
    mode: "payment",
    status: "complete",
    payment_status: "paid",
    metadata: { keyward_kind: "support_renewal", keyward_license_id: licenseId },
    client_reference_id: licenseId,
    customer: null,
    customer_details: { email: "buyer@example.com" },
    payment_intent: `pi_test_${seq}`,
    subscription: null,
    invoice: null,
    amount_total: 4900,
    currency: "usd",
    ...over,
  };
}

async function deliver(t: TestApp, ev: { payload: string; signature: string }) {
  return await t.request("POST", `${V1}/webhooks/stripe`, { body: ev.payload, raw: true, headers: { "stripe-signature": ev.signature } });
}

const json = (v: unknown) => (typeof v === "string" ? JSON.parse(v) : v) as Record<string, any>;
async function outbox(t: TestApp, kind: "event" | "email", topic: string) {
  const rows = await t.exec<{ payload: unknown }>("SELECT payload FROM outbox WHERE kind = $1 AND topic = $2 ORDER BY created_at, id", [kind, topic]);
  return rows.map((r) => json(r.payload));
}

describe("POST /license/support/checkout", () => {
  test("returns the Stripe Checkout URL; the fake saw the price, the metadata and the return URLs on BASE_URL", async () => {
    const t = await app();
    const { license: l, key } = await license(t, {}, { email: "owner@example.com" });
    const before = fake.callsTo("POST", "/v1/checkout/sessions").length;
    const res = await checkout(t, { license_key: key });
    expect(res.status).toBe(200);
    expect(res.body.data.checkout_url).toMatch(/^https:\/\/checkout\.stripe\.test\/c\/pay\/cs_test/);
    const calls = fake.callsTo("POST", "/v1/checkout/sessions");
    expect(calls.length).toBe(before + 1);
    const body = calls.at(-1)!.body;
    expect(body.mode).toBe("payment");
    expect(body.line_items).toEqual([{ price: PRICE, quantity: "1" }]);
    expect(body.metadata).toEqual({ keyward_kind: "support_renewal", keyward_license_id: l.id });
    expect(body.payment_intent_data).toEqual({ metadata: { keyward_kind: "support_renewal", keyward_license_id: l.id } });
    expect(body.client_reference_id).toBe(l.id);
    expect(body.customer_email).toBe("owner@example.com");
    const base = t.deps.config.baseUrl.replace(/\/+$/, "");
    expect(body.success_url).toBe(`${base}/checkout/success?session_id={CHECKOUT_SESSION_ID}`);
    expect(body.cancel_url).toBe(`${base}/checkout/cancel`);
    expect(calls.at(-1)!.idempotencyKey).toMatch(/^keyward-support-checkout:/);

    // A double click within the window opens no second session (Stripe replays the idempotent call).
    const again = await checkout(t, { license_key: key.toLowerCase() });
    expect(again.status).toBe(200);
    expect(again.body.data.checkout_url).toBe(res.body.data.checkout_url);
    expect(fake.callsTo("POST", "/v1/checkout/sessions").at(-1)!.replayed).toBe(true);

    // The return pages exist.
    for (const path of ["/checkout/success?session_id=cs_test_x", "/checkout/cancel"]) {
      const page = await t.request("GET", path);
      expect(page.status).toBe(200);
      expect(page.headers.get("content-type")).toContain("text/html");
      expect(page.headers.get("content-security-policy")).toContain("default-src 'none'");
    }
  });

  test("a license billed through a Stripe customer checks out as that customer", async () => {
    const t = await app();
    const { license: l, key } = await license(t);
    const now = t.clock.now();
    await t.deps.repos.payments.upsertLink({
      licenseId: l.id,
      stripeCustomerId: "cus_test_linked",
      stripeSubscriptionId: null,
      stripeCheckoutSessionId: null,
      subscriptionStatus: null,
      createdAt: now,
      updatedAt: now,
    });
    expect((await checkout(t, { license_key: key })).status).toBe(200);
    const body = fake.callsTo("POST", "/v1/checkout/sessions").at(-1)!.body;
    expect(body.customer).toBe("cus_test_linked");
    expect(body.customer_email).toBeUndefined();
  });

  test("404 LICENSE_NOT_FOUND for unknown, malformed, revoked and other-product keys; nothing sent to Stripe", async () => {
    const t = await app();
    const { license: l, key } = await license(t);
    const other = await makeProduct(t.deps);
    const before = fake.callsTo("POST", "/v1/checkout/sessions").length;
    const unknown = await checkout(t, { license_key: "KW-ABCDEFGH-JKLMNPQR-STUVWXYZ-23456789" });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe("LICENSE_NOT_FOUND");
    expect((await checkout(t, { license_key: "nope" })).status).toBe(404);
    expect((await checkout(t, { license_key: key, product_id: other.id })).status).toBe(404);
    await patch(t, l.id, { status: "revoked" });
    const revoked = await checkout(t, { license_key: key });
    expect(revoked.status).toBe(404);
    expect(revoked.text).toBe(unknown.text.replace(unknown.body.error.message, revoked.body.error.message));
    expect(fake.callsTo("POST", "/v1/checkout/sessions").length).toBe(before);
  });

  test("unknown keys feed the per-address lockout of activate: 429 LOCKED_OUT, then even a real key waits", async () => {
    const t = await app({ ...fake.env(), BF_MAX_FAILS: "3" });
    const { key } = await license(t);
    for (let i = 0; i < 3; i++) expect((await checkout(t, { license_key: `KW-ABCDEFGH-JKLMNPQR-STUVWXYZ-2345678${i + 2}` })).status).toBe(404);
    const locked = await checkout(t, { license_key: key });
    expect(locked.status).toBe(429);
    expect(locked.body.error.code).toBe("LOCKED_OUT");
    expect(locked.headers.get("retry-after")).not.toBeNull();
  });

  test("400 for a missing key or unknown fields", async () => {
    const t = await app();
    expect((await checkout(t, {})).status).toBe(400);
    expect((await checkout(t, { license_key: "x", extra: 1 })).status).toBe(400);
  });

  test("503 RENEWAL_NOT_AVAILABLE for a plan without support_renewal_price_id, and without Stripe", async () => {
    const t = await app();
    const { key } = await license(t, { supportRenewalPriceId: null });
    const res = await checkout(t, { license_key: key });
    expect(res.status).toBe(503);
    expect(res.body.error.code).toBe("RENEWAL_NOT_AVAILABLE");

    const bare = await app({});
    const { key: k2 } = await license(bare);
    const off = await checkout(bare, { license_key: k2 });
    expect(off.status).toBe(503);
    expect(off.body.error.code).toBe("RENEWAL_NOT_AVAILABLE");
  });

  test("409 when support is unlimited (nothing to renew)", async () => {
    const t = await app();
    const { key } = await license(t, {}, { supportUntil: null });
    const res = await checkout(t, { license_key: key });
    expect(res.status).toBe(409);
    expect(res.body.error.details).toEqual({ reason: "support_unlimited" });
  });

  test("502 PAYMENT_PROVIDER_ERROR when Stripe keeps failing", async () => {
    const t = await app();
    const { key } = await license(t);
    fake.failNext("POST", "/v1/checkout/sessions", 3, 500);
    const res = await checkout(t, { license_key: key });
    expect(res.status).toBe(502);
    expect(res.body.error.code).toBe("PAYMENT_PROVIDER_ERROR");
  });
});

describe("renewal on checkout.session.completed", () => {
  test("an early renewal keeps the remaining time: support_until + support_days", async () => {
    const t = await app();
    const now = t.clock.now();
    const { license: l } = await license(t, { supportDays: 365 }, { supportUntil: new Date(now.getTime() + 10 * DAY) });
    const ev = await fake.signedEvent("checkout.session.completed", paidSession(l.id));
    const res = await deliver(t, ev);
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ received: true, duplicate: false, outcome: "support_renewed" });
    expect((await supportUntil(t, l.id))!.getTime()).toBe(now.getTime() + 375 * DAY);
  });

  test("a lapsed window restarts from now", async () => {
    const t = await app();
    const now = t.clock.now();
    const { license: l } = await license(t, { supportDays: 30 }, { supportUntil: new Date(now.getTime() - 100 * DAY) });
    expect((await deliver(t, await fake.signedEvent("checkout.session.completed", paidSession(l.id)))).body.data.outcome).toBe("support_renewed");
    expect((await supportUntil(t, l.id))!.getTime()).toBe(now.getTime() + 30 * DAY);
  });

  test("a window renewed past 9999-12-31 ends there (the last instant both engines store) instead of failing", async () => {
    const t = await app();
    const last = "9999-12-31T23:59:59.999Z";
    const { license: l } = await license(t, { supportDays: 365 }, { supportUntil: new Date("9999-06-01T00:00:00.000Z") });
    const res = await deliver(t, await fake.signedEvent("checkout.session.completed", paidSession(l.id)));
    expect(res.status).toBe(200);
    expect(res.body.data.outcome).toBe("support_renewed");
    expect((await supportUntil(t, l.id))!.toISOString()).toBe(last);
    expect((await t.request("GET", `${V1}/admin/licenses/${l.id}`)).body.data.support_until).toBe(last);
  });

  test("the event is applied in a durable transaction (Stripe never redelivers what it got a 200 for), a duplicate answers without one", async () => {
    const t = await app();
    const { license: l } = await license(t, { supportDays: 30 });
    const asked: (boolean | undefined)[] = [];
    const transaction = t.deps.db.transaction;
    t.deps.db.transaction = (fn, opts) => {
      asked.push(opts?.durable);
      return transaction(fn, opts);
    };
    const ev = await fake.signedEvent("checkout.session.completed", paidSession(l.id));
    expect((await deliver(t, ev)).body.data.outcome).toBe("support_renewed");
    expect(asked).toEqual([true]);
    expect((await deliver(t, ev)).body.data.duplicate).toBe(true);
    expect(asked).toEqual([true]);
  });

  test("the same event delivered three times extends once: one payment, one event, one email", async () => {
    const t = await app();
    const now = t.clock.now();
    const { license: l } = await license(t, {}, { supportUntil: new Date(now.getTime() + DAY) });
    const session = paidSession(l.id);
    const ev = await fake.signedEvent("checkout.session.completed", session);
    const outcomes = [];
    for (let i = 0; i < 3; i++) outcomes.push((await deliver(t, ev)).body.data);
    expect(outcomes).toEqual([
      { received: true, duplicate: false, outcome: "support_renewed" },
      { received: true, duplicate: true, outcome: "support_renewed" },
      { received: true, duplicate: true, outcome: "support_renewed" },
    ]);
    expect((await supportUntil(t, l.id))!.getTime()).toBe(now.getTime() + 366 * DAY);
    const payments = await t.deps.repos.payments.listPayments(l.id);
    expect(payments).toHaveLength(1);
    expect(payments[0]).toMatchObject({ kind: "support_renewal", stripeCheckoutSessionId: session.id, stripePaymentIntentId: session.payment_intent, amount: 4900, currency: "usd" });
    expect(await outbox(t, "event", "license.support_renewed")).toHaveLength(1);
    expect(await outbox(t, "email", "support_renewed")).toHaveLength(1);
    const audit = await t.exec<{ actor_type: string; actor_id: string }>("SELECT actor_type, actor_id FROM audit_log WHERE action = 'license.support_renew' AND entity_id = $1", [l.id]);
    expect(audit).toEqual([{ actor_type: "system", actor_id: "stripe" }]);

    // Another event for the same checkout session (async_payment_succeeded) applies nothing more.
    const second = await fake.signedEvent("checkout.session.async_payment_succeeded", session);
    expect((await deliver(t, second)).body.data).toEqual({ received: true, duplicate: false, outcome: "ignored_already_recorded" });
    expect((await supportUntil(t, l.id))!.getTime()).toBe(now.getTime() + 366 * DAY);
  });

  test("delivered to two nodes on one database at once, it extends once", async () => {
    const a = await app();
    const b = await app(fake.env(), { sameDatabaseAs: a });
    const now = a.clock.now();
    const { license: l } = await license(a, {}, { supportUntil: new Date(now.getTime() + DAY) });
    const ev = await fake.signedEvent("checkout.session.completed", paidSession(l.id));
    const results = await Promise.all([deliver(a, ev), deliver(b, ev), deliver(a, ev), deliver(b, ev)]);
    expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    expect(results.filter((r) => r.body.data.duplicate === false)).toHaveLength(1);
    expect(results.every((r) => r.body.data.outcome === "support_renewed")).toBe(true);
    expect((await supportUntil(a, l.id))!.getTime()).toBe(now.getTime() + 366 * DAY);
    expect(await a.deps.repos.payments.listPayments(l.id)).toHaveLength(1);
    expect(await outbox(a, "event", "license.support_renewed")).toHaveLength(1);
  });

  test("the webhook is not counted by the public API's per-address limit (it has its own, generous one)", async () => {
    const t = await app({ ...fake.env(), RATE_LIMIT_PUBLIC_PER_MINUTE: "1" });
    for (let i = 0; i < 3; i++) {
      const ev = await fake.signedEvent("customer.created", { id: `cus_rl_${i}`, object: "customer" });
      expect((await deliver(t, ev)).status).toBe(200);
    }
  });

  test("a bad signature answers 400 and changes nothing", async () => {
    const t = await app();
    const until = new Date(t.clock.now().getTime() + DAY);
    const { license: l } = await license(t, {}, { supportUntil: until });
    const forged = await fake.signedEvent("checkout.session.completed", paidSession(l.id), { secret: "whsec_not_the_secret" });
    const res = await deliver(t, forged);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("STRIPE_SIGNATURE_INVALID");
    expect((await supportUntil(t, l.id))!.getTime()).toBe(until.getTime());
    expect(await t.deps.repos.payments.listPayments(l.id)).toHaveLength(0);
    expect(await t.deps.repos.payments.eventOutcome(forged.id)).toBeNull();
  });

  test("unpaid, unknown-license, revoked, unlimited and foreign checkouts: outcomes, and never a new license", async () => {
    const t = await app();
    const now = t.clock.now();
    const until = new Date(now.getTime() + DAY);
    const { license: l } = await license(t, {}, { supportUntil: until });
    const count = async () => (await t.exec("SELECT id FROM licenses")).length;
    const licenses = await count();
    const outcome = async (object: Record<string, unknown>, type = "checkout.session.completed") =>
      (await deliver(t, await fake.signedEvent(type, object))).body.data.outcome;

    expect(await outcome(paidSession(l.id, { payment_status: "unpaid" }))).toBe("ignored_unpaid");
    expect(await outcome(paidSession("0192f0c4-5d6e-7a8b-9c0d-1e2f3a4b5c6d"))).toBe("ignored_license_not_found");
    expect(await outcome(paidSession(l.id, { metadata: {} }))).toBe("ignored_not_keyward_checkout");
    expect(await outcome(paidSession(l.id, { metadata: { keyward_kind: "support_renewal" }, client_reference_id: null }))).toBe("ignored_no_license");
    expect((await supportUntil(t, l.id))!.getTime()).toBe(until.getTime());

    const { license: unlimited } = await license(t, {}, { supportUntil: null });
    expect(await outcome(paidSession(unlimited.id))).toBe("support_unlimited");
    expect(await supportUntil(t, unlimited.id)).toBeNull();
    expect(await t.deps.repos.payments.listPayments(unlimited.id)).toHaveLength(1);

    await patch(t, l.id, { status: "revoked" });
    expect(await outcome(paidSession(l.id))).toBe("ignored_license_revoked");
    expect((await supportUntil(t, l.id))!.getTime()).toBe(until.getTime());
    // The money arrived: it is recorded so an admin can refund it.
    expect(await t.deps.repos.payments.listPayments(l.id)).toHaveLength(1);

    expect(await count()).toBe(licenses + 1);
    expect(await outbox(t, "event", "license.support_renewed")).toHaveLength(0);
  });

  test("license.support_renewed reaches a webhook endpoint (standardwebhooks) and the confirmation email the SMTP server, once", async () => {
    const smtp = await startSmtpServer();
    cleanup.push(() => smtp.stop());
    const receiver = startWebhookReceiver();
    cleanup.push(() => receiver.stop());
    const t = await app({ ...fake.env(), SMTP_URL: smtp.url, MAIL_FROM: "Acme <noreply@acme.example>" });
    const created = await t.request("POST", `${V1}/admin/webhooks`, { body: { url: receiver.url("/hooks"), events: ["license.support_renewed"] } });
    expect(created.status).toBe(201);
    const now = t.clock.now();
    const previous = new Date(now.getTime() + 5 * DAY);
    const { license: l } = await license(t, { supportDays: 365 }, { supportUntil: previous, email: "owner@example.com" });
    const ev = await fake.signedEvent("checkout.session.completed", paidSession(l.id));
    for (let i = 0; i < 3; i++) expect((await deliver(t, ev)).status).toBe(200);
    const run = async (name: string) => expect((await t.request("POST", `${V1}/admin/system/jobs/${name}/run`)).status).toBe(200);
    await run("deliver-outbox");
    await run("deliver-webhooks");
    await run("deliver-outbox");

    const expected = new Date(now.getTime() + 370 * DAY).toISOString();
    const hooks = receiver.at("/hooks");
    expect(hooks).toHaveLength(1);
    const body = new Webhook(created.body.data.secret).verify(hooks[0]!.body, {
      "webhook-id": hooks[0]!.id,
      "webhook-timestamp": hooks[0]!.timestamp,
      "webhook-signature": hooks[0]!.signature,
    }) as Record<string, any>;
    expect(body.type).toBe("license.support_renewed");
    expect(body.data).toMatchObject({ license_id: l.id, support_until: expected, previous_support_until: previous.toISOString() });

    const mails = smtp.received.filter((m) => m.envelope.to[0] === "owner@example.com");
    expect(mails).toHaveLength(1);
    expect(mails[0]!.subject).toContain("Acme Editor");
    expect(mails[0]!.text).toContain(`${expected.slice(0, 16).replace("T", " ")} UTC`);
    expect(mails[0]!.html).toContain("Acme Editor");
  });
});
