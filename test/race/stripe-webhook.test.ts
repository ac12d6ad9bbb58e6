// One Stripe event delivered to several Keyward processes on one database at once, on each engine
// (SQLite file; PostgreSQL with TEST_DATABASE_URL): the event id is claimed in the transaction of
// its effect, so the support window is extended exactly once, with one payment row, one event and
// one email, whichever node wins.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { engines } from "../contract/harness";
import { makeLicense, makePlan, makeProduct } from "../support/factories";
import { startFakeStripe, type FakeStripe } from "../support/fake-stripe";
import { DAY } from "../../src/shared/clock";
import { all, tally } from "./support";
import { startCluster, type Cluster } from "./cluster";

const NODES = 3;

for (const engine of engines()) {
  describe(`Stripe webhook on ${NODES} nodes on ${engine}`, () => {
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

    test("the same checkout.session.completed sent 30 times across the nodes at once extends support once", async () => {
      const product = await makeProduct(c.t.deps, { name: "Acme Editor" });
      const plan = await makePlan(c.t.deps, product.id, { supportRenewalPriceId: "price_support", supportDays: 365 });
      // Far in the future, so "now" on any node does not matter: the new end is exactly +365 days.
      const until = new Date(Date.now() + 100 * DAY);
      const { license } = await makeLicense(c.t.deps, { productId: product.id, planId: plan.id, supportUntil: until });
      const ev = await fake.signedEvent("checkout.session.completed", {
        id: "cs_test_race",
        object: "checkout.session",
        mode: "payment",
        status: "complete",
        payment_status: "paid",
        metadata: { keyward_kind: "support_renewal", keyward_license_id: license.id },
        client_reference_id: license.id,
        customer: null,
        payment_intent: "pi_test_race",
        amount_total: 4900,
        currency: "usd",
      });
      const results = await all(30, async (i) => {
        const res = await fetch(`${c.url(i)}/api/v1/webhooks/stripe`, {
          method: "POST",
          headers: { "content-type": "application/json; charset=utf-8", "stripe-signature": ev.signature },
          body: ev.payload,
        });
        return { status: res.status, body: (await res.json()) as any, headers: res.headers };
      });
      expect(tally(results)).toEqual({ 200: 30 });
      expect(results.filter((r) => r.body.data.duplicate === false)).toHaveLength(1);
      expect(results.every((r) => r.body.data.outcome === "support_renewed")).toBe(true);
      const after = await c.t.deps.repos.licenses.findById(license.id);
      expect(after!.supportUntil!.getTime()).toBe(until.getTime() + 365 * DAY);
      expect(await c.t.deps.repos.payments.listPayments(license.id)).toHaveLength(1);
      const rows = await c.t.exec("SELECT id FROM outbox WHERE topic IN ('license.support_renewed', 'support_renewed')");
      expect(rows).toHaveLength(2);
    });
  });
}
