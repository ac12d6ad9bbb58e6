// LifecycleRepo on both engines: the keyset walk, the guarded expiry (compare-and-set), the notice
// insert as the dedupe guard, effects only for what took effect; and on PostgreSQL, three nodes
// running the whole pass at once still write each email and event once.
import { afterEach, beforeEach, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { forEachEngine, type Opened } from "./harness";
import { seedLicense, seedPlan, seedProduct, SEED_TIME } from "./seed";
import { repoFor } from "./repos";
import { withNodes } from "./nodes";
import { DAY, HOUR } from "../../src/shared/clock";
import { secretsFromMaster } from "../../src/modules/keys/secrets";
import { runLifecycle } from "../../src/modules/lifecycle/service";
import { USABLE_STATUSES } from "../../src/modules/lifecycle/domain";
import type { LifecycleOp } from "../../src/modules/lifecycle/repo";
import type { Deps, Repos } from "../../src/deps";
import { runPass } from "../../src/jobs/runner";
import { fixedClock } from "../../src/shared/clock";
import { createLogger } from "../../src/shared/logger";

const at = (ms: number) => new Date(SEED_TIME.getTime() + ms);
const secrets = secretsFromMaster(randomBytes(32));

async function outboxCounts(repos: Repos) {
  const page = await repos.outbox.listEmails({ limit: 200 });
  return page.items.map((m) => m.topic).sort();
}

forEachEngine("LifecycleRepo", (engine, open) => {
  let o: Opened;
  let repos: Repos;
  beforeEach(async () => {
    o = await open();
    repos = repoFor(o);
  });
  afterEach(() => o.close());

  test("scan walks (column, id) in pages, within the range and statuses", async () => {
    const product = await seedProduct(o);
    const { plan } = await seedPlan(o, product.id, { graceDays: 2 });
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await seedLicense(o, product.id, plan.id, { validUntil: at(DAY) })).id);
    await seedLicense(o, product.id, plan.id, { validUntil: at(DAY), status: "revoked" });
    await seedLicense(o, product.id, plan.id, { validUntil: at(30 * DAY) });
    await seedLicense(o, product.id, plan.id, { validUntil: null });
    const scan = { column: "validUntil" as const, statuses: USABLE_STATUSES, from: null, to: at(2 * DAY) };
    const seen: string[] = [];
    let cursor = null;
    for (;;) {
      const page = await repos.lifecycle.scan(scan, cursor, 2);
      seen.push(...page.map((c) => c.license.id));
      if (page.length < 2) break;
      const last = page[page.length - 1]!.license;
      cursor = { at: last.validUntil!, id: last.id };
    }
    expect(seen).toEqual([...ids].sort());
    const [first] = await repos.lifecycle.scan(scan, null, 1);
    expect(first).toMatchObject({ graceDays: 2, productName: product.name, planName: plan.name, subscriptionStatus: null });
    // The Stripe subscription status of a license's billing link comes with it (no row: null).
    const sorted = [...ids].sort();
    await repos.payments.upsertLink({
      licenseId: sorted[1]!,
      stripeCustomerId: "cus_1",
      stripeSubscriptionId: "sub_1",
      stripeCheckoutSessionId: null,
      subscriptionStatus: "active",
      createdAt: SEED_TIME,
      updatedAt: SEED_TIME,
    });
    const statuses = (await repos.lifecycle.scan(scan, null, 10)).map((c) => c.subscriptionStatus);
    expect(statuses).toEqual([null, "active", null, null, null]);
  });

  test("expire is a compare-and-set; notices are inserted once; effects only for what took effect", async () => {
    const product = await seedProduct(o);
    const { plan } = await seedPlan(o, product.id);
    const l = await seedLicense(o, product.id, plan.id, { validUntil: at(DAY), status: "trialing" });
    const email = { template: "license_expired", to: l.email, data: { license_id: l.id }, at: at(2 * DAY) };
    const expire = (status: "trialing" | "active"): LifecycleOp => ({
      type: "expire",
      licenseId: l.id,
      expect: { status, validUntil: at(DAY), pastDueSince: null },
      effects: (after) => ({ emails: [{ ...email, data: { license_id: after.id, status: after.status } }] }),
    });
    const notice: LifecycleOp = {
      type: "notice",
      licenseId: l.id,
      kind: "expiry_reminder:7",
      dueFor: at(DAY),
      statuses: USABLE_STATUSES,
      guardColumn: "validUntil",
      effects: { emails: [{ ...email, template: "expiry_reminder" }] },
    };
    expect(await repos.lifecycle.apply([notice, notice], at(0))).toEqual([true, false]);
    expect(await repos.lifecycle.apply([expire("active"), expire("trialing"), expire("trialing")], at(2 * DAY))).toEqual([false, true, false]);
    expect((await repos.licenses.findById(l.id))!.status).toBe("expired");
    // Expired: a notice about it is no longer sent, even of a new kind.
    expect(await repos.lifecycle.apply([{ ...notice, kind: "expiry_reminder:1" }], at(2 * DAY))).toEqual([false]);
    expect(await outboxCounts(repos)).toEqual(["expiry_reminder", "license_expired"]);
    expect((await repos.lifecycle.notices(l.id)).map((n) => [n.kind, n.dueFor.toISOString()])).toEqual([["expiry_reminder:7", at(DAY).toISOString()]]);
  });

  test("a notice whose end date moved (renewed) is not sent for the old date", async () => {
    const product = await seedProduct(o);
    const { plan } = await seedPlan(o, product.id);
    const l = await seedLicense(o, product.id, plan.id, { supportUntil: at(40 * DAY) });
    const op: LifecycleOp = {
      type: "notice",
      licenseId: l.id,
      kind: "support_reminder:30",
      dueFor: at(30 * DAY),
      statuses: USABLE_STATUSES,
      guardColumn: "supportUntil",
      effects: { emails: [{ template: "support_reminder", to: l.email, data: {}, at: at(0) }] },
    };
    expect(await repos.lifecycle.apply([op], at(0))).toEqual([false]);
    expect(await repos.lifecycle.apply([{ ...op, dueFor: at(40 * DAY) }], at(0))).toEqual([true]);
  });

  if (engine === "postgres") {
    test("three nodes running the pass at once write each email and event once", async () => {
      const product = await seedProduct(o);
      const { plan } = await seedPlan(o, product.id, { graceDays: 0 });
      const { plan: trial } = await seedPlan(o, product.id, { licenseType: "trial" });
      const now = at(0);
      for (let i = 0; i < 12; i++) {
        await seedLicense(o, product.id, plan.id, { validUntil: at(5 * DAY + i * HOUR) });
        await seedLicense(o, product.id, plan.id, { supportUntil: at(20 * DAY + i * HOUR) });
        await seedLicense(o, product.id, trial.id, { status: "trialing", validUntil: at(-HOUR - i * HOUR) });
        await seedLicense(o, product.id, plan.id, { status: "past_due", pastDueSince: at(-HOUR - i * HOUR) });
        await seedLicense(o, product.id, plan.id, { supportUntil: at(-HOUR - i * HOUR) });
      }
      for (let round = 0; round < 2; round++) {
        const results = await withNodes(o, 3, (nodes) => Promise.all(nodes.map((r) => runLifecycle({ repos: r, secrets }, now, { batchSize: 5 }))));
        const sum = (k: keyof (typeof results)[number]) => results.reduce((n, r) => n + r[k], 0);
        expect({
          expiry_reminders: sum("expiry_reminders"),
          support_reminders: sum("support_reminders"),
          trials_expired: sum("trials_expired"),
          dunning_emails: sum("dunning_emails"),
          support_ended: sum("support_ended"),
        }).toEqual(round === 0 ? { expiry_reminders: 12, support_reminders: 12, trials_expired: 12, dunning_emails: 12, support_ended: 12 } : { expiry_reminders: 0, support_reminders: 0, trials_expired: 0, dunning_emails: 0, support_ended: 0 });
      }
      const topics = await outboxCounts(repos);
      const count0 = topics.length;
      expect(count0).toBe(60);
      const count = (name: string) => topics.filter((t) => t === name).length;
      expect([count("expiry_reminder"), count("support_reminder"), count("license_expired"), count("dunning"), count("support_ended")]).toEqual([12, 12, 12, 12, 12]);
      const events = await o.pg!.sql`SELECT topic, count(*)::int AS n FROM outbox WHERE kind = 'event' GROUP BY topic ORDER BY topic`;
      expect(events.map((r) => [r.topic, r.n])).toEqual([
        ["license.expired", 12],
        ["license.support_ended", 12],
      ]);
    });

    test("three nodes claiming the same hourly slot: one runs the pass", async () => {
      const product = await seedProduct(o);
      const { plan: trial } = await seedPlan(o, product.id, { licenseType: "trial" });
      for (let i = 0; i < 4; i++) await seedLicense(o, product.id, trial.id, { status: "trialing", validUntil: at(-HOUR) });
      const slot = new Date("2026-11-21T08:07:00.000Z");
      const outcomes = await withNodes(o, 3, (nodes) =>
        Promise.all(
          nodes.map((r, i) => {
            const deps = { repos: r, secrets, clock: fixedClock(slot), logger: createLogger("silent") } as unknown as Deps;
            return runPass(deps, "lifecycle", { trigger: "schedule", slot, owner: `node-${i}` });
          }),
        ),
      );
      const ran = outcomes.filter((x) => x !== null);
      expect(ran).toHaveLength(1);
      expect(ran[0]).toMatchObject({ status: "ok", result: expect.objectContaining({ trials_expired: 4 }) });
      expect(await outboxCounts(repos)).toEqual(["license_expired", "license_expired", "license_expired", "license_expired"]);
    });
  }
});
