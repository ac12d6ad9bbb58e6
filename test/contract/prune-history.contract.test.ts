// The prune-history batches on every engine (OutboxRepo.pruneFinished,
// WebhookRepo.pruneFinishedDeliveries, PaymentRepo.pruneEvents, MeterQueueRepo.pruneFinished): only
// finished rows older than the cut-off go, never a pending one nor a recent one, at most `limit` per
// call; Keyward's own stripe_events claims stay. Then the pass itself (src/jobs/prune-history.ts)
// over each engine's repositories: counts per table, bounded batches per run.
import { afterEach, describe, expect, test } from "bun:test";
import * as sqliteSchema from "../../src/db/schema";
import * as pgSchema from "../../src/db/schema-pg";
import type { Deps, Repos } from "../../src/deps";
import { pruneHistory } from "../../src/jobs/prune-history";
import type { MeterEvent } from "../../src/modules/metering/repo";
import type { OutboxStatus } from "../../src/modules/outbox/repo";
import type { DeliveryStatus, WebhookDelivery } from "../../src/modules/webhooks/repo";
import { newId } from "../../src/shared/ids";
import { createWebhookRepo } from "../../src/modules/webhooks/repo.sql";
import { pgQueryDialect } from "../../src/db/dialect/query.pg";
import { forEachEngine, type Opened } from "./harness";
import { morePools } from "./support-pg";
import { repoFor } from "./repos";
import { readRows } from "./rows";
import { insertRows, seedCatalog } from "./seed";

const DAY = 86_400_000;
const NOW = new Date("2026-11-23T08:00:00.000Z");
const daysAgo = (d: number) => new Date(NOW.getTime() - d * DAY);
/** The cut-off the batches get: rows whose time is before it go. */
const CUT = daysAgo(30);

const outboxRow = (status: OutboxStatus, at: Date) => ({
  id: newId(),
  kind: "event",
  topic: "license.revoked",
  payload: {},
  status,
  attempts: status === "failed" ? 3 : 0,
  nextAttemptAt: at,
  lastError: null,
  createdAt: at,
  sentAt: status === "sent" || status === "logged" ? at : null,
});

const deliveryRow = (endpointId: string, status: DeliveryStatus, at: Date): WebhookDelivery => ({
  id: newId(),
  endpointId,
  eventId: newId(),
  eventType: "license.revoked",
  body: "{}",
  status,
  attempts: 1,
  nextAttemptAt: at,
  lastAttemptAt: at,
  lastResponseCode: status === "delivered" ? 200 : 500,
  lastLatencyMs: 10,
  lastResponseBody: null,
  lastError: null,
  createdAt: at,
  deliveredAt: status === "delivered" ? at : null,
});

const meterRow = (licenseId: string, status: MeterEvent["status"], at: Date): MeterEvent => ({
  id: newId(),
  licenseId,
  feature: "api",
  eventName: "api_calls",
  quantity: 1,
  occurredAt: at,
  status,
  attempts: 1,
  nextAttemptAt: at,
  lastError: status === "skipped" ? "no customer" : null,
  sentAt: status === "sent" ? at : null,
});

async function chunked<T>(rows: T[], write: (chunk: T[]) => Promise<unknown>) {
  // SQLite caps the bound parameters of one statement.
  for (let i = 0; i < rows.length; i += 200) await write(rows.slice(i, i + 200));
}

async function newEndpoint(repos: Repos): Promise<string> {
  const id = newId();
  await repos.webhooks.createEndpoint(
    {
      id,
      url: "https://hooks.example.com/in",
      description: "",
      events: ["*"],
      enabled: true,
      productId: null,
      secretEncrypted: "v1.sealed.secret",
      previousSecretEncrypted: null,
      previousSecretExpiresAt: null,
      signingKeyEncrypted: null,
      signingPublicKey: null,
      consecutiveFailures: 0,
      disabledReason: null,
      disabledAt: null,
      createdAt: NOW,
      updatedAt: NOW,
    },
  );
  return id;
}

async function stripeEventIds(o: Opened): Promise<string[]> {
  const rows = o.sqlite
    ? o.sqlite.db.select({ id: sqliteSchema.stripeEvents.id }).from(sqliteSchema.stripeEvents).all()
    : await o.pg!.db.select({ id: pgSchema.stripeEvents.id }).from(pgSchema.stripeEvents);
  return rows.map((r) => r.id).sort();
}

forEachEngine("prune-history batches", (engine, open) => {
  let o: Opened;
  let repos: Repos;
  const setup = async () => {
    o = await open();
    repos = repoFor(o);
  };
  afterEach(() => o?.close());

  test("OutboxRepo.pruneFinished: finished messages before the cut-off go, pending and recent ones stay; at most `limit` a call", async () => {
    await setup();
    const keep = [outboxRow("pending", daysAgo(40)), outboxRow("sent", daysAgo(29)), outboxRow("failed", daysAgo(1)), outboxRow("logged", NOW)];
    const old = [outboxRow("sent", daysAgo(31)), outboxRow("failed", daysAgo(90)), outboxRow("logged", daysAgo(365))];
    await insertRows(o, "outbox", [...keep, ...old]);
    expect(await repos.outbox.pruneFinished(CUT, 2)).toBe(2);
    expect(await repos.outbox.pruneFinished(CUT, 2)).toBe(1);
    expect(await repos.outbox.pruneFinished(CUT, 2)).toBe(0);
    expect((await readRows(o, "outbox")).map((r) => r.id).sort()).toEqual(keep.map((r) => r.id).sort());
    expect(await repos.outbox.pruneFinished(CUT, 0)).toBe(0);
  });

  test("WebhookRepo.pruneFinishedDeliveries: delivered and failed deliveries before the cut-off go; pending, retrying, redelivered and recent ones stay", async () => {
    await setup();
    const e = await newEndpoint(repos);
    const pending = deliveryRow(e, "pending", daysAgo(45)); // waiting for a disabled endpoint, say
    const recent = deliveryRow(e, "delivered", daysAgo(29));
    const redelivered = deliveryRow(e, "failed", daysAgo(60));
    const old = [deliveryRow(e, "delivered", daysAgo(31)), deliveryRow(e, "failed", daysAgo(31)), deliveryRow(e, "delivered", daysAgo(400))];
    expect(await repos.webhooks.addDeliveries([pending, recent, redelivered, ...old])).toBe(6);
    // An admin redelivers an old failed delivery: pending and due now, so it stays.
    expect((await repos.webhooks.redeliver(redelivered.id, NOW))?.status).toBe("pending");

    expect(await repos.webhooks.pruneFinishedDeliveries(CUT, 2)).toBe(2);
    expect(await repos.webhooks.pruneFinishedDeliveries(CUT, 2)).toBe(1);
    expect(await repos.webhooks.pruneFinishedDeliveries(CUT, 2)).toBe(0);
    for (const d of old) expect(await repos.webhooks.getDelivery(d.id)).toBeNull();
    for (const d of [pending, recent, redelivered]) expect(await repos.webhooks.getDelivery(d.id)).not.toBeNull();
    // The delivery log still lists what is left.
    expect((await repos.webhooks.listDeliveries({ endpointId: e, limit: 10 })).items.map((d) => d.id).sort()).toEqual([pending.id, recent.id, redelivered.id].sort());
  });

  // SQLite has one writer: a batch is one statement nothing interleaves with.
  (engine === "postgres" ? test : test.skip)("WebhookRepo.pruneFinishedDeliveries (PostgreSQL): a redelivery committed while a batch waits for its row keeps the delivery", async () => {
    await setup();
    const e = await newEndpoint(repos);
    const target = deliveryRow(e, "failed", daysAgo(60));
    const others = [deliveryRow(e, "delivered", daysAgo(40)), deliveryRow(e, "failed", daysAgo(50))];
    await repos.webhooks.addDeliveries([target, ...others]);
    const [node] = await morePools(o, 1);
    try {
      let pruned = null as number | null;
      await o.pg!.sql.begin(async (tx) => {
        // An admin's redelivery, not committed yet: it holds the row.
        await tx`UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = ${NOW.toISOString()}::timestamptz WHERE id = ${target.id}`;
        const pruning = createWebhookRepo(pgQueryDialect(node!)).pruneFinishedDeliveries(CUT, 10).then((n) => (pruned = n));
        await Bun.sleep(300);
        expect(pruned).toBeNull(); // waiting for the row
        void pruning;
      });
      // The batch re-checked the row after the redelivery committed: pending now, so it stays.
      for (let i = 0; i < 50 && pruned === null; i++) await Bun.sleep(20);
      expect(pruned).toBe(2);
      expect((await repos.webhooks.getDelivery(target.id))?.status).toBe("pending");
      for (const d of others) expect(await repos.webhooks.getDelivery(d.id)).toBeNull();
    } finally {
      await node!.close();
    }
  });

  test("PaymentRepo.pruneEvents: processed Stripe event ids before the cut-off go; recent ones and Keyward's purchase claims stay", async () => {
    await setup();
    const oldIds = ["evt_old1", "evt_old2", "evt_old3"];
    for (const id of oldIds) expect(await repos.payments.claimEvent(id, "invoice.paid", "renewed", daysAgo(31))).toBe(true);
    expect(await repos.payments.claimEvent("evt_recent", "invoice.paid", "renewed", daysAgo(29))).toBe(true);
    expect(await repos.payments.claimEvent("keyward:purchase:sub_1", "keyward.purchase_issue", "issued", daysAgo(400))).toBe(true);
    // Not Keyward's prefix: an id that merely looks alike goes like any other.
    expect(await repos.payments.claimEvent("keyward_purchase", "x", "ignored", daysAgo(400))).toBe(true);

    expect(await repos.payments.pruneEvents(CUT, 3)).toBe(3);
    expect(await repos.payments.pruneEvents(CUT, 3)).toBe(1);
    expect(await repos.payments.pruneEvents(CUT, 3)).toBe(0);
    expect(await stripeEventIds(o)).toEqual(["evt_recent", "keyward:purchase:sub_1"]);
    // A pruned id could be claimed again; the ones kept still refuse a second claim (exactly once).
    expect(await repos.payments.claimEvent("evt_recent", "invoice.paid", "renewed", NOW)).toBe(false);
    expect(await repos.payments.claimEvent("keyward:purchase:sub_1", "keyward.purchase_issue", "issued", NOW)).toBe(false);
  });

  test("MeterQueueRepo.pruneFinished: sent and skipped rows before the cut-off go, pending and recent ones stay", async () => {
    await setup();
    const { license } = await seedCatalog(o);
    const keep = [meterRow(license.id, "pending", daysAgo(50)), meterRow(license.id, "sent", daysAgo(29)), meterRow(license.id, "skipped", NOW)];
    const old = [meterRow(license.id, "sent", daysAgo(31)), meterRow(license.id, "skipped", daysAgo(32)), meterRow(license.id, "sent", daysAgo(3000))];
    for (const r of [...keep, ...old]) await repos.meterQueue.enqueue(r);
    expect(await repos.meterQueue.pruneFinished(CUT, 2)).toBe(2);
    expect(await repos.meterQueue.pruneFinished(CUT, 2)).toBe(1);
    expect(await repos.meterQueue.pruneFinished(CUT, 2)).toBe(0);
    expect((await repos.meterQueue.listByLicense(license.id)).map((r) => r.id).sort()).toEqual(keep.map((r) => r.id).sort());
  });

  describe("the pass over these repositories", () => {
    const deps = (retentionDays: number) => ({ repos, config: { historyRetentionDays: retentionDays } }) as unknown as Deps;

    test("reports counts per table; stripe_events keep 30 days even with a shorter retention", async () => {
      await setup();
      const { license } = await seedCatalog(o);
      const e = await newEndpoint(repos);
      await insertRows(o, "outbox", [outboxRow("sent", daysAgo(8)), outboxRow("failed", daysAgo(8)), outboxRow("logged", daysAgo(6)), outboxRow("pending", daysAgo(8))]);
      await repos.webhooks.addDeliveries([deliveryRow(e, "delivered", daysAgo(8)), deliveryRow(e, "pending", daysAgo(8))]);
      await repos.payments.claimEvent("evt_8d", "invoice.paid", "renewed", daysAgo(8));
      await repos.payments.claimEvent("evt_31d", "invoice.paid", "renewed", daysAgo(31));
      await repos.meterQueue.enqueue(meterRow(license.id, "skipped", daysAgo(8)));
      await repos.meterQueue.enqueue(meterRow(license.id, "pending", daysAgo(8)));

      // Seven days: the 8-day-old finished rows go; the Stripe event of 8 days stays (30-day floor).
      expect(await pruneHistory(deps(7), NOW)).toEqual({ outbox: 2, webhook_deliveries: 1, stripe_events: 1, meter_queue: 1, capped: 0 });
      expect(await pruneHistory(deps(7), NOW)).toEqual({ outbox: 0, webhook_deliveries: 0, stripe_events: 0, meter_queue: 0, capped: 0 });
      expect((await readRows(o, "outbox")).map((r) => r.status).sort()).toEqual(["logged", "pending"]);
      expect(await stripeEventIds(o)).toEqual(["evt_8d"]);
    });

    test("a run stops after its batch limit per table and says so; the next run goes on", async () => {
      await setup();
      const e = await newEndpoint(repos);
      await chunked(
        Array.from({ length: 25 }, (_, i) => outboxRow("sent", daysAgo(40 + i))),
        (c) => insertRows(o, "outbox", c),
      );
      await chunked(
        Array.from({ length: 12 }, () => deliveryRow(e, "failed", daysAgo(40))),
        (c) => repos.webhooks.addDeliveries(c),
      );
      const limits = { batch: 5, maxBatches: 3 };
      expect(await pruneHistory(deps(30), NOW, limits)).toEqual({ outbox: 15, webhook_deliveries: 12, stripe_events: 0, meter_queue: 0, capped: 1 });
      // Ten left: two full batches and an empty third one, so this run saw the end.
      expect(await pruneHistory(deps(30), NOW, limits)).toEqual({ outbox: 10, webhook_deliveries: 0, stripe_events: 0, meter_queue: 0, capped: 0 });
      expect(await pruneHistory(deps(30), NOW, limits)).toEqual({ outbox: 0, webhook_deliveries: 0, stripe_events: 0, meter_queue: 0, capped: 0 });
    });

    test("the real batch size: 2,500 old rows go in three statements of at most 1,000", async () => {
      await setup();
      await chunked(
        Array.from({ length: 2500 }, () => outboxRow("sent", daysAgo(31))),
        (c) => insertRows(o, "outbox", c),
      );
      const calls: number[] = [];
      const counting = {
        ...repos,
        outbox: {
          ...repos.outbox,
          pruneFinished: async (before: Date, limit: number) => {
            const n = await repos.outbox.pruneFinished(before, limit);
            calls.push(n);
            return n;
          },
        },
      } as Repos;
      const result = await pruneHistory({ repos: counting, config: { historyRetentionDays: 30 } } as unknown as Deps, NOW);
      expect(result.outbox).toBe(2500);
      expect(calls).toEqual([1000, 1000, 500]);
    });
  });
});
