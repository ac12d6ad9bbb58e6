// PaymentRepo on every engine: an event id is claimed once (also when the claim rolls back and is
// retried, and when three PostgreSQL nodes claim it at once inside their own transactions), payments
// are recorded once per checkout session or invoice and listed newest first, billing links are
// upserted and found by license, subscription and checkout session.
import { afterEach, expect, test } from "bun:test";
import type { Payment, PaymentRepo } from "../../src/modules/payments/repo";
import { openPostgres } from "../../src/db/pg";
import { withPgTransaction } from "../../src/db/transaction.pg";
import { createPgRepos } from "../../src/repos.pg";
import { newId } from "../../src/shared/ids";
import { forEachEngine, type Opened } from "./harness";
import { seedCatalog, SEED_TIME } from "./seed";
import { repoFor } from "./repos";
import { pgNodes } from "./inspect";

const later = (ms: number) => new Date(SEED_TIME.getTime() + ms);

forEachEngine("PaymentRepo", (engine, open) => {
  let o: Opened;
  let repo: PaymentRepo;
  const setup = async () => {
    o = await open();
    repo = repoFor(o).payments;
  };
  afterEach(() => o?.close());

  const payment = (licenseId: string, over: Partial<Payment> = {}): Payment => ({
    id: newId(),
    licenseId,
    kind: "support_renewal",
    stripeCheckoutSessionId: null,
    stripeInvoiceId: null,
    stripePaymentIntentId: null,
    amount: 4900,
    currency: "usd",
    paidAt: SEED_TIME,
    refundState: null,
    stripeRefundId: null,
    refundedAt: null,
    disputeStatus: null,
    stripeDisputeId: null,
    createdAt: SEED_TIME,
    ...over,
  });

  test("claimEvent: once per id; the outcome can be read and replaced", async () => {
    await setup();
    expect(await repo.claimEvent("evt_1", "checkout.session.completed", "processing", SEED_TIME)).toBe(true);
    expect(await repo.claimEvent("evt_1", "checkout.session.completed", "processing", later(1000))).toBe(false);
    expect(await repo.eventOutcome("evt_1")).toBe("processing");
    await repo.setEventOutcome("evt_1", "renewed");
    expect(await repo.eventOutcome("evt_1")).toBe("renewed");
    expect(await repo.eventOutcome("evt_2")).toBeNull();
  });

  test("recordPayment: once per checkout session and per invoice; listed newest first", async () => {
    await setup();
    const { license } = await seedCatalog(o);
    expect(await repo.recordPayment(payment(license.id, { stripeCheckoutSessionId: "cs_1", paidAt: later(1) }))).toBe(true);
    expect(await repo.recordPayment(payment(license.id, { stripeCheckoutSessionId: "cs_1", paidAt: later(2) }))).toBe(false);
    expect(await repo.recordPayment(payment(license.id, { kind: "subscription", stripeInvoiceId: "in_1", paidAt: later(3) }))).toBe(true);
    expect(await repo.recordPayment(payment(license.id, { kind: "subscription", stripeInvoiceId: "in_1", paidAt: later(4) }))).toBe(false);
    // Neither id set: nothing to collide on.
    expect(await repo.recordPayment(payment(license.id, { paidAt: later(5), stripePaymentIntentId: "pi_9" }))).toBe(true);
    const listed = await repo.listPayments(license.id);
    expect(listed.map((p) => [p.stripeCheckoutSessionId, p.stripeInvoiceId, p.stripePaymentIntentId, p.paidAt.getTime() - SEED_TIME.getTime()])).toEqual([
      [null, null, "pi_9", 5],
      [null, "in_1", null, 3],
      ["cs_1", null, null, 1],
    ]);
    expect(listed[1]).toMatchObject({ kind: "subscription", amount: 4900, currency: "usd", refundState: null, refundedAt: null });
  });

  test("billing links: upsert keeps created_at; found by license, subscription and checkout session", async () => {
    await setup();
    const { license } = await seedCatalog(o);
    const link = { licenseId: license.id, stripeCustomerId: "cus_1", stripeSubscriptionId: "sub_1", stripeCheckoutSessionId: "cs_1", subscriptionStatus: "trialing", createdAt: SEED_TIME, updatedAt: SEED_TIME };
    expect(await repo.upsertLink(link)).toEqual(link);
    const updated = await repo.upsertLink({ ...link, subscriptionStatus: "active", createdAt: later(9), updatedAt: later(10) });
    expect(updated).toEqual({ ...link, subscriptionStatus: "active", updatedAt: later(10) });
    expect(await repo.findLink(license.id)).toEqual(updated);
    expect(await repo.findLinkBySubscription("sub_1")).toEqual(updated);
    expect(await repo.findLinkByCheckoutSession("cs_1")).toEqual(updated);
    expect(await repo.findLinkBySubscription("sub_2")).toBeNull();
    expect(await repo.findLink(newId())).toBeNull();
  });

  if (engine === "postgres") {
    test("three nodes claiming one event inside their transactions: one wins, a rolled-back claim frees the id", async () => {
      await setup();
      const opts = o.pg!.sql.options as unknown as { host: string[]; port: number[]; user: string; database: string };
      const url = `postgres://${encodeURIComponent(opts.user)}@${opts.host[0]}:${opts.port[0]}/${opts.database}`;
      const nodes = Array.from({ length: 3 }, () => openPostgres(url, { max: 2 }));
      try {
        // A claim whose transaction rolls back leaves the id free.
        await expect(
          withPgTransaction(nodes[0]!, async (tx) => {
            expect(await createPgRepos(tx).payments.claimEvent("evt_race", "x", "processing", SEED_TIME)).toBe(true);
            throw new Error("effect failed");
          }),
        ).rejects.toThrow("effect failed");
        const wins = await Promise.all(
          nodes.map((node) =>
            withPgTransaction(node, async (tx) => {
              const won = await createPgRepos(tx).payments.claimEvent("evt_race", "x", "processing", SEED_TIME);
              // Hold the transaction open so the others' claims really overlap it.
              await Bun.sleep(150);
              return won;
            }),
          ),
        );
        expect(wins.filter(Boolean)).toHaveLength(1);
      } finally {
        await Promise.all(nodes.map((n) => n.close()));
      }
    });
  }

  test("refund claims: null → pending once; complete records the refund once; release gives a pending claim back", async () => {
    await setup();
    const { license } = await seedCatalog(o);
    const p = payment(license.id, { stripePaymentIntentId: "pi_r" });
    await repo.recordPayment(p);
    const state = async () => (await repo.listPayments(license.id))[0]!;

    expect(await repo.releaseRefund(p.id)).toBe(false); // nothing to give back
    expect(await repo.claimRefund(p.id)).toBe(true);
    expect(await repo.claimRefund(p.id)).toBe(false);
    expect((await state()).refundState).toBe("pending");
    expect(await repo.releaseRefund(p.id)).toBe(true);
    expect(await state()).toMatchObject({ refundState: null, stripeRefundId: null, refundedAt: null });

    expect(await repo.claimRefund(p.id)).toBe(true);
    expect(await repo.completeRefund(p.id, "re_1", later(60))).toBe(true);
    expect(await state()).toMatchObject({ refundState: "refunded", stripeRefundId: "re_1", refundedAt: later(60) });
    // Done is done: no second record, no claim, no release.
    expect(await repo.completeRefund(p.id, "re_2", later(70))).toBe(false);
    expect(await repo.claimRefund(p.id)).toBe(false);
    expect(await repo.releaseRefund(p.id)).toBe(false);
    expect((await state()).stripeRefundId).toBe("re_1");

    // Stripe's answer wins over a claim given back meanwhile; an unknown refund id is kept as null.
    const q = payment(license.id, { stripePaymentIntentId: "pi_q", paidAt: later(1) });
    await repo.recordPayment(q);
    expect(await repo.completeRefund(q.id, null, later(80))).toBe(true);
    expect((await repo.listPayments(license.id))[0]).toMatchObject({ id: q.id, refundState: "refunded", stripeRefundId: null, refundedAt: later(80) });
    expect(await repo.claimRefund(newId())).toBe(false);
  });

  test("disputes: a payment is found by its PaymentIntent (newest first); its dispute state is recorded and read back", async () => {
    await setup();
    const { license } = await seedCatalog(o);
    const older = payment(license.id, { stripePaymentIntentId: "pi_d", stripeCheckoutSessionId: "cs_d1", paidAt: later(1) });
    const newer = payment(license.id, { stripePaymentIntentId: "pi_d", stripeCheckoutSessionId: "cs_d2", paidAt: later(2) });
    await repo.recordPayment(older);
    await repo.recordPayment(newer);
    expect(await repo.findPaymentByIntent("pi_none")).toBeNull();
    expect(await repo.findPaymentByIntent("pi_d")).toMatchObject({ id: newer.id, disputeStatus: null, stripeDisputeId: null });

    expect(await repo.setDispute(newer.id, "open_suspended", "du_1")).toBe(true);
    expect(await repo.findPaymentByIntent("pi_d")).toMatchObject({ id: newer.id, disputeStatus: "open_suspended", stripeDisputeId: "du_1" });
    expect(await repo.setDispute(newer.id, "won", "du_1")).toBe(true);
    expect((await repo.listPayments(license.id))[0]).toMatchObject({ id: newer.id, disputeStatus: "won", stripeDisputeId: "du_1" });
    // The other payment of the intent is untouched; an unknown payment is reported.
    expect((await repo.listPayments(license.id))[1]).toMatchObject({ id: older.id, disputeStatus: null });
    expect(await repo.setDispute(newId(), "lost", "du_2")).toBe(false);

    // A subscription invoice's payment is found by its invoice.
    const inv = payment(license.id, { kind: "subscription", stripeInvoiceId: "in_d", paidAt: later(3) });
    await repo.recordPayment(inv);
    expect(await repo.findPaymentByInvoice("in_d")).toMatchObject({ id: inv.id, kind: "subscription", disputeStatus: null });
    expect(await repo.findPaymentByInvoice("in_none")).toBeNull();
  });

  if (engine === "postgres") {
    test("three nodes claiming one refund at once: exactly one wins", async () => {
      await setup();
      const { license } = await seedCatalog(o);
      const p = payment(license.id, { stripePaymentIntentId: "pi_race" });
      await repo.recordPayment(p);
      const nodes = await pgNodes(o, 3);
      try {
        const wins = await Promise.all(Array.from({ length: 9 }, (_, i) => nodes.repos[i % 3]!.payments.claimRefund(p.id)));
        expect(wins.filter(Boolean)).toHaveLength(1);
        const done = await Promise.all(Array.from({ length: 9 }, (_, i) => nodes.repos[i % 3]!.payments.completeRefund(p.id, `re_${i}`, later(i))));
        expect(done.filter(Boolean)).toHaveLength(1);
      } finally {
        await nodes.close();
      }
    });
  }
});
