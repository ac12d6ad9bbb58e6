// LifecycleRepo on both engines: the keyset walk, the guarded expiry (compare-and-set), the notice
// insert as the dedupe guard, effects only for what took effect; and on PostgreSQL, three nodes
// running the whole pass at once still write each email and event once.
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { forEachEngine, type Opened } from "./harness";
import { seedLicense, seedPlan, seedProduct, SEED_TIME } from "./seed";
import { repoFor } from "./repos";
import { withNodes } from "./nodes";
import { unitOf } from "./unit";
import { changeLicense } from "../../src/modules/licenses/change";
import { DAY, HOUR } from "../../src/shared/clock";
import { secretsFromMaster } from "../../src/modules/keys/secrets";
import { runLifecycle } from "../../src/modules/lifecycle/service";
import { USABLE_STATUSES } from "../../src/modules/lifecycle/domain";
import type { LifecycleCursor, LifecycleOp, LifecycleScan } from "../../src/modules/lifecycle/repo";
import { lifecycleChangesQuery, lifecycleRowsQuery, lifecycleScanQuery } from "../../src/modules/lifecycle/repo.sqlite";
import { WALK_PLANNER_SETTINGS, lifecycleChangesQueryPg, lifecycleRowsQueryPg, lifecycleScanQueryPg } from "../../src/modules/lifecycle/repo.pg";
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

  test("scan walks (status, column, id) in pages, within the range and its status", async () => {
    const product = await seedProduct(o);
    const { plan } = await seedPlan(o, product.id, { graceDays: 2 });
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await seedLicense(o, product.id, plan.id, { validUntil: at(DAY) })).id);
    await seedLicense(o, product.id, plan.id, { validUntil: at(DAY), status: "revoked" });
    await seedLicense(o, product.id, plan.id, { validUntil: at(30 * DAY) });
    await seedLicense(o, product.id, plan.id, { validUntil: null });
    const scan = { column: "validUntil" as const, status: "active" as const, from: null, to: at(2 * DAY) };
    const seen: string[] = [];
    let cursor: LifecycleCursor | null = null;
    for (;;) {
      const { items: page, next } = await repos.lifecycle.scan(scan, cursor, 2);
      seen.push(...page.map((c) => c.license.id));
      if (next === null) break;
      expect(next).toEqual({ at: at(DAY), id: page[page.length - 1]!.license.id });
      cursor = next;
    }
    expect(seen).toEqual([...ids].sort());
    const [first] = (await repos.lifecycle.scan(scan, null, 1)).items;
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
    const statuses = (await repos.lifecycle.scan(scan, null, 10)).items.map((c) => c.subscriptionStatus);
    expect(statuses).toEqual([null, "active", null, null, null]);
  });

  /** Every shape of walk the pass runs (service.ts), with and without a cursor. */
  type Shape = { scan: LifecycleScan; cursor: LifecycleCursor | null; index: string };
  function walkShapes(): Shape[] {
    const out: Shape[] = [];
    const cursors = [null, { at: at(HOUR), id: "01JZZZZZZZZZZZZZZZZZZZZZZZ" }];
    const dates = { validUntil: "licenses_status_valid_until_idx", supportUntil: "licenses_status_support_until_idx", pastDueSince: "licenses_status_past_due_since_idx" } as const;
    for (const [column, index] of Object.entries(dates) as [keyof typeof dates, string][])
      for (const status of USABLE_STATUSES)
        for (const from of [null, at(-30 * DAY)])
          for (const cursor of cursors) out.push({ scan: { column, status, from, to: at(7 * DAY) }, cursor, index });
    for (const cursor of cursors) {
      for (const status of USABLE_STATUSES) out.push({ scan: { column: "updatedAt", status, from: at(-HOUR), to: null }, cursor, index: "licenses_status_updated_idx" });
      out.push({ scan: { column: "billingUpdatedAt", status: null, from: at(-HOUR), to: null }, cursor, index: "billing_links_updated_idx" });
    }
    return out;
  }

  /** sqlite_stat1 of licenses, plans and products at a million licenses (see the test below). */
  const MILLION_LICENSES_STAT1: [string, string, string][] = [
    ["licenses", "licenses_created_idx", "1000000 1 1"],
    ["licenses", "licenses_email_domain_idx", "1000000 1001 1 1"],
    ["licenses", "licenses_email_lower_idx", "1000000 1 1 1"],
    ["licenses", "licenses_ext_customer_idx", "1000000 2 1 1"],
    ["licenses", "licenses_ext_workspace_idx", "1000000 1001 1 1"],
    ["licenses", "licenses_key_hash_unique", "1000000 1"],
    ["licenses", "licenses_key_hint_idx", "1000000 2 1 1"],
    ["licenses", "licenses_plan_created_idx", "1000000 1001 1 1"],
    ["licenses", "licenses_product_created_idx", "1000000 1001 1 1"],
    ["licenses", "licenses_product_status_created_idx", "1000000 1001 1001 1 1"],
    ["licenses", "licenses_product_status_valid_until_idx", "1000000 1001 1001 1001 1"],
    ["licenses", "licenses_product_valid_until_idx", "1000000 1001 1001 1"],
    ["licenses", "licenses_status_created_idx", "1000000 1001 1 1"],
    ["licenses", "licenses_status_past_due_since_idx", "1000000 1001 1001 1"],
    ["licenses", "licenses_status_support_until_idx", "1000000 1001 1001 1"],
    ["licenses", "licenses_status_updated_idx", "1000000 1001 1 1"],
    ["licenses", "licenses_status_valid_until_idx", "1000000 1001 2 1"],
    ["licenses", "licenses_valid_until_idx", "1000000 2 1"],
    ["licenses", "sqlite_autoindex_licenses_1", "1000000 1"],
    ["plans", "plans_product_idx", "8 2"],
    ["plans", "sqlite_autoindex_plans_1", "8 1"],
    ["products", "products_slug_unique", "4 1"],
    ["products", "sqlite_autoindex_products_1", "4 1"],
  ];

  test("every walk's page is one index range scan, with no sort, with and without planner statistics", async () => {
    // Some rows in several statuses, so the statistics ANALYZE gathers are not of empty tables.
    const product = await seedProduct(o);
    const { plan } = await seedPlan(o, product.id);
    for (let i = 0; i < 40; i++) {
      const status = (["active", "trialing", "past_due", "expired", "revoked"] as const)[i % 5]!;
      await seedLicense(o, product.id, plan.id, { status, validUntil: at(i * HOUR), supportUntil: at(i * DAY), pastDueSince: status === "past_due" ? at(-i * HOUR) : null });
    }
    const shapes = walkShapes();
    if (o.sqlite) {
      const sqlite = o.sqlite.sqlite;
      const db = o.sqlite.db;
      const explain = (q: { sql: string; params: unknown[] }) =>
        (sqlite.query(`EXPLAIN QUERY PLAN ${q.sql}`).all(...(q.params as never[])) as { detail: string }[]).map((p) => p.detail).join("\n");
      const plans = () => [
        ...shapes.map(({ scan, cursor, index }) => {
          const q = scan.column === "updatedAt" || scan.column === "billingUpdatedAt" ? lifecycleChangesQuery(db, scan, cursor, 250) : lifecycleScanQuery(db, { ...scan, column: scan.column }, cursor, 250);
          return { scan, cursor, index, detail: explain(q.toSQL()) };
        }),
        // The change walks' second statement: the licenses by primary key.
        { scan: "rows by id", cursor: null, index: null, detail: explain(lifecycleRowsQuery(db, ["a", "b"]).toSQL()) },
      ];
      for (const stats of [false, true, "a million licenses"] as const) {
        if (stats === true) sqlite.exec("ANALYZE");
        if (stats === "a million licenses") {
          // What PRAGMA optimize (analysis_limit 1000) recorded on bench/scale.ts's 1,000,000 licenses
          // over 4 products and 8 plans: with it SQLite drove from products into
          // licenses_product_status_valid_until_idx and sorted every page (0.9 s each) until the joins
          // kept licenses the outer loop (repo.sqlite.ts candidates).
          sqlite.exec("DELETE FROM sqlite_stat1 WHERE tbl IN ('licenses', 'plans', 'products', 'billing_links')");
          const insert = sqlite.query("INSERT INTO sqlite_stat1 (tbl, idx, stat) SELECT ?1, ?2, ?3 WHERE EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = ?2)");
          for (const [tbl, idx, stat] of MILLION_LICENSES_STAT1) insert.run(tbl, idx, stat);
          sqlite.exec("ANALYZE sqlite_schema");
        }
        for (const p of plans()) {
          const label = `${JSON.stringify(p.scan)} cursor=${p.cursor !== null} stats=${stats}\n${p.detail}`;
          // The rows by id: any index lookup with id = ? (with statistics of a 1-plan catalog the planner
          // drives from plans and looks licenses up by (product_id, id), equally a lookup).
          expect(p.detail, label).toMatch(p.index ? new RegExp(`USING (COVERING )?INDEX ${p.index}\\b`) : /SEARCH licenses USING (COVERING )?INDEX \w+ \([^)]*\bid=\?/);
          expect(p.detail, label).not.toContain("TEMP B-TREE");
          expect(p.detail, label).not.toMatch(/SCAN (licenses|billing_links)\b(?! USING)/);
        }
      }
      return;
    }
    const pg = o.pg!;
    for (const stats of [false, true]) {
      if (stats) await pg.sql.unsafe("ANALYZE licenses; ANALYZE billing_links");
      const statements = [
        ...shapes.map(({ scan, cursor, index }) => ({
          scan,
          cursor,
          index,
          settings: WALK_PLANNER_SETTINGS as string | null,
          q: (scan.column === "updatedAt" || scan.column === "billingUpdatedAt" ? lifecycleChangesQueryPg(pg.db, scan, cursor, 250) : lifecycleScanQueryPg(pg.db, { ...scan, column: scan.column }, cursor, 250)).toSQL(),
        })),
        { scan: "rows by id", cursor: null, index: "licenses_pkey", settings: null as string | null, q: lifecycleRowsQueryPg(pg.db, ["a", "b"]).toSQL() },
      ];
      for (const { scan, cursor, index, q, settings } of statements) {
        // Tiny tables make a sequential scan cheapest; forbid it to see the index the plan can use.
        const rows = await pg.sql.begin(async (tx) => {
          await tx.unsafe("SET LOCAL enable_seqscan = off");
          // The settings the repository runs each walk's page under (repo.pg.ts: WALK_PLANNER_SETTINGS).
          if (settings) await tx.unsafe(settings);
          return (await tx.unsafe(`EXPLAIN ${q.sql}`, q.params as never[])) as unknown as { "QUERY PLAN": string }[];
        });
        const text = rows.map((r) => r["QUERY PLAN"]).join("\n");
        const label = `${JSON.stringify(scan)} cursor=${cursor !== null} stats=${stats}\n${text}`;
        expect(text, label).toMatch(new RegExp(`(Index (Only )?Scan using|Bitmap Index Scan on) ${index}\\b`));
        if (index !== "licenses_pkey") expect(text, label).not.toContain("Bitmap");
        expect(text, label).not.toMatch(/Seq Scan on (licenses|billing_links)\b/);
        expect(text, label).not.toMatch(/\bSort\b/);
      }
    }
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
    // In one batch, later actions see earlier ones (PostgreSQL sends a batch's statements pipelined):
    // the second expiry finds the license expired, and so does a notice after it.
    expect(await repos.lifecycle.apply([expire("active"), expire("trialing"), expire("trialing"), { ...notice, kind: "expiry_reminder:3" }], at(2 * DAY))).toEqual([false, true, false, false]);
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

  describe("the watermark of the last completed pass", () => {
    const pass = (now: Date, batchSize = 25) => runLifecycle({ repos, secrets }, now, { batchSize });
    const kinds = async (id: string) => (await repos.lifecycle.notices(id)).map((n) => n.kind);

    test("a pass with nothing due after a completed one reads a handful of rows, however many licenses its windows hold", async () => {
      const product = await seedProduct(o);
      const { plan } = await seedPlan(o, product.id, { graceDays: 0 });
      // Written a day before the passes (SEED_TIME); ends spread over the reminder and support windows.
      const T = at(DAY);
      for (let i = 0; i < 60; i++) {
        await seedLicense(o, product.id, plan.id, { validUntil: new Date(T.getTime() + 10 * HOUR + i * 2 * HOUR) });
        await seedLicense(o, product.id, plan.id, { supportUntil: new Date(T.getTime() - 20 * DAY + 10 * HOUR + i * 13 * HOUR) });
      }
      const first = await pass(T);
      expect(first.scanned).toBeGreaterThanOrEqual(120);
      expect(first.expiry_reminders + first.support_reminders + first.support_ended).toBeGreaterThan(0);

      // An hour later: only dates that crossed a threshold in that hour (one end every 2 h per window).
      const second = await pass(new Date(T.getTime() + HOUR));
      expect(second.scanned).toBeLessThanOrEqual(6);
      const third = await pass(new Date(T.getTime() + HOUR));
      expect(third.scanned).toBeLessThanOrEqual(6);
      expect(third).toMatchObject({ batches: 0, expiry_reminders: 0, support_reminders: 0, support_ended: 0 });

      // Without a watermark (here: other reminder settings) the pass reads its full windows again.
      await repos.settings.put("expiry_reminder_days", [7, 3, 2, 1], new Date(T.getTime() + HOUR));
      const full = await pass(new Date(T.getTime() + 2 * HOUR));
      expect(full.scanned).toBeGreaterThanOrEqual(100);
    });

    test("a date edited after a pass gets its most urgent reminder at the next one", async () => {
      const product = await seedProduct(o);
      const { plan } = await seedPlan(o, product.id);
      const l = await seedLicense(o, product.id, plan.id, { validUntil: at(90 * DAY), supportUntil: at(200 * DAY) });
      const T = at(DAY);
      expect((await pass(T)).scanned).toBe(0);
      // Edited between the passes: valid_until 2 days ahead (3-day reminder), support 20 days ahead (30-day reminder).
      await unitOf(o)((r) => changeLicense(r, l.id, () => ({ validUntil: new Date(T.getTime() + 2 * DAY + 30 * 60_000), supportUntil: new Date(T.getTime() + 20 * DAY) }), new Date(T.getTime() + 30 * 60_000), () => ({})));
      const next = await pass(new Date(T.getTime() + HOUR));
      expect(next).toMatchObject({ expiry_reminders: 1, support_reminders: 1 });
      expect((await kinds(l.id)).sort()).toEqual(["expiry_reminder:3", "support_reminder:30"]);
    });

    test("after downtime: what became due meanwhile expires, is reminded (most urgent) and noticed", async () => {
      const product = await seedProduct(o);
      const { plan } = await seedPlan(o, product.id, { graceDays: 2 });
      const { plan: trialPlan } = await seedPlan(o, product.id, { licenseType: "trial" });
      const T = at(DAY);
      const graceEnds = await seedLicense(o, product.id, plan.id, { validUntil: new Date(T.getTime() + 3 * DAY) });
      const trial = await seedLicense(o, product.id, trialPlan.id, { status: "trialing", validUntil: new Date(T.getTime() + 5 * DAY) });
      const reminded = await seedLicense(o, product.id, plan.id, { validUntil: new Date(T.getTime() + 12 * DAY) });
      const lapsed = await seedLicense(o, product.id, plan.id, { supportUntil: new Date(T.getTime() + 4 * DAY) });
      const pastDue = await seedLicense(o, product.id, plan.id, { status: "past_due", pastDueSince: at(0) });
      await pass(T);
      // No pass for ten days.
      const back = await pass(new Date(T.getTime() + 10 * DAY));
      expect(back).toMatchObject({ grace_expired: 1, trials_expired: 1, expiry_reminders: 1, support_ended: 1, dunning_emails: 1 });
      expect((await repos.licenses.findById(graceEnds.id))!.status).toBe("expired");
      expect((await repos.licenses.findById(trial.id))!.status).toBe("expired");
      expect(await kinds(reminded.id)).toEqual(["expiry_reminder:3"]);
      expect(await kinds(lapsed.id)).toEqual(["support_reminder:7", "support_ended"]);
      expect(await kinds(pastDue.id)).toEqual(["dunning:1", "dunning:7"]);
    });

    test("new reminder days: the next pass reads the full windows, so a lead added beyond the old ones is sent", async () => {
      const product = await seedProduct(o);
      const { plan } = await seedPlan(o, product.id);
      const T = at(DAY);
      const l = await seedLicense(o, product.id, plan.id, { validUntil: new Date(T.getTime() + 10 * DAY) });
      expect((await pass(T)).expiry_reminders).toBe(0);
      await repos.settings.put("expiry_reminder_days", [14, 7, 3, 1], new Date(T.getTime() + 10 * 60_000));
      expect((await pass(new Date(T.getTime() + HOUR))).expiry_reminders).toBe(1);
      expect(await kinds(l.id)).toEqual(["expiry_reminder:14"]);
    });

    test("a subscription that stops renewing by itself gets its reminder at the next pass (billing link changed)", async () => {
      const product = await seedProduct(o);
      const { plan } = await seedPlan(o, product.id);
      const T = at(DAY);
      const l = await seedLicense(o, product.id, plan.id, { validUntil: new Date(T.getTime() + 5 * DAY) });
      const link = { licenseId: l.id, stripeCustomerId: "cus_1", stripeSubscriptionId: "sub_1", stripeCheckoutSessionId: null, subscriptionStatus: "active", createdAt: SEED_TIME, updatedAt: SEED_TIME };
      await repos.payments.upsertLink(link);
      expect((await pass(T)).expiry_reminders).toBe(0);
      await repos.payments.upsertLink({ ...link, subscriptionStatus: "canceled", updatedAt: new Date(T.getTime() + 10 * 60_000) });
      expect((await pass(new Date(T.getTime() + HOUR))).expiry_reminders).toBe(1);
      expect(await kinds(l.id)).toEqual(["expiry_reminder:7"]);
    });

    test("a pass stopped between pages (the node shutting down) throws and records no watermark", async () => {
      const product = await seedProduct(o);
      const { plan } = await seedPlan(o, product.id, { graceDays: 0 });
      for (let i = 0; i < 5; i++) await seedLicense(o, product.id, plan.id, { validUntil: at(-HOUR) });
      const abort = new AbortController();
      abort.abort(new Error("the node is shutting down"));
      await expect(runLifecycle({ repos, secrets }, at(DAY), { batchSize: 2, signal: abort.signal })).rejects.toThrow("the node is shutting down");
      expect(await repos.lifecycle.watermark()).toBeNull();
      // The next pass reads the full windows and does the work.
      expect(await pass(at(DAY))).toMatchObject({ grace_expired: 5 });
      expect(await repos.lifecycle.watermark()).toMatchObject({ passedAt: at(DAY) });
    });

    test("a pass that finishes after a later-started one does not move the watermark back", async () => {
      await repos.lifecycle.saveWatermark({ passedAt: at(2 * HOUR), basis: "b" });
      await repos.lifecycle.saveWatermark({ passedAt: at(HOUR), basis: "a" });
      expect(await repos.lifecycle.watermark()).toEqual({ passedAt: at(2 * HOUR), basis: "b" });
      await repos.lifecycle.saveWatermark({ passedAt: at(3 * HOUR), basis: "c" });
      expect(await repos.lifecycle.watermark()).toEqual({ passedAt: at(3 * HOUR), basis: "c" });
    });
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
