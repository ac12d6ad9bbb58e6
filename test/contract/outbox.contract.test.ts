// OutboxRepo on every engine: enqueue, claims that keep other nodes off a message, fenced outcomes.
import { afterEach, expect, test } from "bun:test";
import type { OutboxMessage, OutboxRepo } from "../../src/modules/outbox/repo";
import { createOutboxRepoPg, NEXT_DUE_SQL_PG } from "../../src/modules/outbox/repo.pg";
import { NEXT_DUE_SQL } from "../../src/modules/outbox/repo.sqlite";
import { forEachEngine, type Opened } from "./harness";
import { repoFor } from "./repos";
import { insertRows } from "./seed";
import { morePools } from "./support-pg";
import { unitOf } from "./unit";
import { newId } from "../../src/shared/ids";

const T0 = new Date("2026-11-21T08:00:00.000Z");
const at = (ms: number) => new Date(T0.getTime() + ms);
const MIN = 60_000;

/** A message row, inserted straight into the table (insertRows takes plain records). */
function row(over: Partial<OutboxMessage> = {}): OutboxMessage & Record<string, unknown> {
  return {
    id: newId(),
    kind: "event",
    topic: "license.revoked",
    payload: { license_id: "l-1", nested: { n: 1, list: [1, "two", null] } },
    status: "pending",
    attempts: 0,
    nextAttemptAt: T0,
    lastError: null,
    createdAt: T0,
    sentAt: null,
    ...over,
  };
}

forEachEngine("OutboxRepo", (engine, open) => {
  let o: Opened;
  let repo: OutboxRepo;
  const setup = async () => {
    o = await open();
    repo = repoFor(o).outbox;
  };
  afterEach(() => o?.close());

  test("nextDue: the earliest pending message, and the earliest pending delivery of an enabled endpoint", async () => {
    await setup();
    expect(await repo.nextDue()).toEqual({ outbox: null, webhooks: null });
    await insertRows(o, "outbox", [row({ nextAttemptAt: at(5 * MIN) }), row({ nextAttemptAt: at(-MIN) }), row({ status: "sent", nextAttemptAt: at(-5 * MIN) })]);
    const endpoint = (id: string, enabled: boolean) => ({
      id, url: "https://hooks.example.com/in", description: "", events: ["*"], enabled, productId: null, secretEncrypted: "v1.x",
      previousSecretEncrypted: null, previousSecretExpiresAt: null, signingKeyEncrypted: null, signingPublicKey: null,
      consecutiveFailures: 0, disabledReason: null, disabledAt: null, createdAt: T0, updatedAt: T0,
    });
    const delivery = (endpointId: string, nextAttemptAt: Date, status = "pending") => ({
      id: newId(), endpointId, eventId: newId(), eventType: "license.created", body: "{}", status, attempts: 0, nextAttemptAt,
      lastAttemptAt: null, lastResponseCode: null, lastLatencyMs: null, lastResponseBody: null, lastError: null, createdAt: T0, deliveredAt: null,
    });
    const [on, off] = [newId(), newId()];
    await insertRows(o, "webhookEndpoints", [endpoint(on, true), endpoint(off, false)]);
    await insertRows(o, "webhookDeliveries", [delivery(on, at(2 * MIN)), delivery(on, at(-9 * MIN), "delivered"), delivery(off, at(-9 * MIN))]);
    // A disabled endpoint's pending deliveries wait: they never make the worker busy.
    expect(await repo.nextDue()).toEqual({ outbox: at(-MIN), webhooks: at(2 * MIN) });
  });

  test("wakeDeliveryWork wakes the listeners of onDeliveryWork; in a unit of work at its commit (PostgreSQL: never for a rollback)", async () => {
    await setup();
    let woken = 0;
    const off = await repo.onDeliveryWork(() => woken++);
    const settle = async (ms: number) => {
      for (let t = 0; t < ms && woken === 0; t += 20) await Bun.sleep(20);
    };
    try {
      await repo.wakeDeliveryWork();
      await settle(2000);
      expect(woken).toBeGreaterThan(0);
      woken = 0;
      await unitOf(o)((r) => r.outbox.wakeDeliveryWork());
      await settle(2000);
      expect(woken).toBeGreaterThan(0);
      if (engine === "postgres") {
        woken = 0;
        await unitOf(o)(async (r) => {
          await r.outbox.wakeDeliveryWork();
          throw new Error("rolled back");
        }).catch(() => undefined);
        await settle(300);
        expect(woken).toBe(0);
      }
    } finally {
      await off();
    }
  });

  test("nextDue's statement is index-backed (the idle worker runs it once a second)", async () => {
    await setup();
    if (o.sqlite) {
      const details = (o.sqlite.sqlite.query(`EXPLAIN QUERY PLAN ${NEXT_DUE_SQL}`).all() as { detail: string }[]).map((p) => p.detail).join("\n");
      expect(details).toContain("outbox_due_idx");
      expect(details).toContain("webhook_deliveries_endpoint_due_idx");
      expect(details).not.toMatch(/SCAN (outbox|webhook_deliveries)\b(?! USING)/);
      return;
    }
    // Tiny tables make a sequential scan cheapest; forbid it to see the index the plan can use.
    const plan = await o.pg!.sql.begin(async (tx) => {
      await tx.unsafe("SET LOCAL enable_seqscan = off");
      return (await tx.unsafe(`EXPLAIN ${NEXT_DUE_SQL_PG}`)) as unknown as { "QUERY PLAN": string }[];
    });
    const text = plan.map((r) => r["QUERY PLAN"]).join("\n");
    expect(text).toContain("outbox_due_idx");
    expect(text).toContain("webhook_deliveries_endpoint_due_idx");
    expect(text).not.toMatch(/Seq Scan on (outbox|webhook_deliveries)\b/);
  });

  test("enqueue writes a pending message due at once; get reads it back; unknown id → null", async () => {
    await setup();
    const m = await repo.enqueue({ kind: "email", topic: "invite", payload: { to: "a@example.com", n: 2 }, at: T0 });
    const expected: OutboxMessage = {
      id: m.id,
      kind: "email",
      topic: "invite",
      payload: { to: "a@example.com", n: 2 },
      status: "pending",
      attempts: 0,
      nextAttemptAt: T0,
      lastError: null,
      createdAt: T0,
      sentAt: null,
    };
    expect(m).toEqual(expected);
    expect(await repo.get(m.id)).toEqual(expected);
    expect(await repo.get(newId())).toBeNull();
  });

  test("claimDue takes due pending messages of the listed kinds, oldest first, up to the limit", async () => {
    await setup();
    const a = row({ createdAt: at(-3 * MIN), nextAttemptAt: at(-3 * MIN) });
    const b = row({ createdAt: at(-2 * MIN), nextAttemptAt: at(-MIN), attempts: 2, lastError: "503" });
    const c = row({ createdAt: at(-MIN), nextAttemptAt: T0 });
    const d = row({ createdAt: at(-MIN + 1), nextAttemptAt: T0 });
    const notDue = row({ nextAttemptAt: at(1) });
    const email = row({ kind: "email", topic: "invite" });
    const sent = row({ status: "sent", sentAt: T0 });
    const failed = row({ status: "failed", attempts: 9 });
    await insertRows(o, "outbox", [d, notDue, c, email, b, sent, failed, a]);
    const lease = at(5 * MIN);

    const first = await repo.claimDue({ now: T0, limit: 3, leaseUntil: lease, kinds: ["event"] });
    expect(first).toEqual([a, b, c].map((m) => ({ ...m, nextAttemptAt: lease })));
    const second = await repo.claimDue({ now: T0, limit: 3, leaseUntil: lease, kinds: ["event"] });
    expect(second).toEqual([{ ...d, nextAttemptAt: lease }]);
    expect(await repo.claimDue({ now: T0, limit: 3, leaseUntil: lease, kinds: ["event"] })).toEqual([]);
    // Kinds not listed stay untouched; nothing is claimed for no kinds.
    expect(await repo.get(email.id)).toEqual(email);
    expect(await repo.claimDue({ now: T0, limit: 3, leaseUntil: lease, kinds: [] })).toEqual([]);
    expect(await repo.get(email.id)).toEqual(email);
    expect(await repo.claimDue({ now: T0, limit: 3, leaseUntil: lease, kinds: ["email", "event"] })).toEqual([{ ...email, nextAttemptAt: lease }]);
    // Sent, failed and not-yet-due rows were never touched.
    for (const m of [notDue, sent, failed]) expect(await repo.get(m.id)).toEqual(m);
  });

  test("markSent and markFailed need the current claim; a lost claim changes nothing", async () => {
    await setup();
    const m = row();
    const n = row({ createdAt: at(1) });
    const g = row({ createdAt: at(2), attempts: 4 });
    await insertRows(o, "outbox", [m, n, g]);
    const lease = at(5 * MIN);
    expect((await repo.claimDue({ now: T0, limit: 10, leaseUntil: lease, kinds: ["event"] })).map((x) => x.id)).toEqual([m.id, n.id, g.id]);

    expect(await repo.markSent(m.id, at(1), at(10))).toBe(false);
    expect(await repo.markSent(m.id, lease, at(10))).toBe(true);
    expect(await repo.get(m.id)).toEqual({ ...m, status: "sent", nextAttemptAt: lease, sentAt: at(10) });
    expect(await repo.markSent(m.id, lease, at(11))).toBe(false);
    expect(await repo.markFailed(m.id, lease, "late", at(MIN))).toBe(false);

    expect(await repo.markFailed(n.id, at(1), "wrong claim", at(MIN))).toBe(false);
    expect(await repo.markFailed(n.id, lease, "HTTP 503", at(MIN))).toBe(true);
    expect(await repo.get(n.id)).toEqual({ ...n, attempts: 1, lastError: "HTTP 503", nextAttemptAt: at(MIN) });

    expect(await repo.markFailed(g.id, lease, "gave up", null)).toBe(true);
    expect(await repo.get(g.id)).toEqual({ ...g, status: "failed", attempts: 5, lastError: "gave up", nextAttemptAt: lease });

    // n is due again at its retry time; g (failed) never is.
    expect(await repo.claimDue({ now: at(MIN - 1), limit: 10, leaseUntil: at(9 * MIN), kinds: ["event"] })).toEqual([]);
    expect((await repo.claimDue({ now: at(MIN), limit: 10, leaseUntil: at(9 * MIN), kinds: ["event"] })).map((x) => x.id)).toEqual([n.id]);
  });

  test("markSentMany marks each message with its own claim and status, in one call; lost claims are left out", async () => {
    await setup();
    const a = row();
    const b = row({ createdAt: at(1) });
    const c = row({ createdAt: at(2) });
    const other = row({ createdAt: at(3) });
    await insertRows(o, "outbox", [a, b, c, other]);
    const lease = at(5 * MIN);
    expect(await repo.claimDue({ now: T0, limit: 3, leaseUntil: lease, kinds: ["event"] })).toHaveLength(3);
    expect(await repo.markSentMany([], at(9))).toEqual(new Set());

    const marked = await repo.markSentMany(
      [
        { id: a.id, claim: lease, status: "sent" },
        { id: b.id, claim: lease, status: "logged" },
        // c's claim is not this one (it was claimed again meanwhile), other was never claimed.
        { id: c.id, claim: at(1), status: "sent" },
        { id: other.id, claim: lease, status: "sent" },
      ],
      at(10),
    );
    expect(marked).toEqual(new Set([a.id, b.id]));
    expect(await repo.get(a.id)).toEqual({ ...a, status: "sent", nextAttemptAt: lease, sentAt: at(10) });
    expect(await repo.get(b.id)).toEqual({ ...b, status: "logged", nextAttemptAt: lease, sentAt: at(10) });
    expect(await repo.get(c.id)).toEqual({ ...c, nextAttemptAt: lease });
    expect(await repo.get(other.id)).toEqual(other);
    // Marked once: the same call again marks nothing.
    expect(await repo.markSentMany([{ id: a.id, claim: lease, status: "sent" }], at(11))).toEqual(new Set());
  });

  test("a claim that outlived its lease is due again; the first claimer can no longer mark it", async () => {
    await setup();
    const m = row();
    await insertRows(o, "outbox", [m]);
    const firstLease = at(MIN);
    expect(await repo.claimDue({ now: T0, limit: 1, leaseUntil: firstLease, kinds: ["event"] })).toHaveLength(1);
    expect(await repo.claimDue({ now: at(MIN - 1), limit: 1, leaseUntil: at(2 * MIN), kinds: ["event"] })).toEqual([]);
    const again = await repo.claimDue({ now: at(MIN), limit: 1, leaseUntil: at(3 * MIN), kinds: ["event"] });
    expect(again.map((x) => x.nextAttemptAt)).toEqual([at(3 * MIN)]);
    expect(await repo.markSent(m.id, firstLease, at(MIN + 1))).toBe(false);
    expect(await repo.markSent(m.id, at(3 * MIN), at(MIN + 2))).toBe(true);
  });

  test("three nodes claiming concurrently never get the same message", async () => {
    await setup();
    const rows = Array.from({ length: 90 }, (_, i) => row({ createdAt: at(i), nextAttemptAt: at(i % 7) }));
    await insertRows(o, "outbox", rows);
    const extra = engine === "postgres" ? await morePools(o, 2) : [];
    try {
      const repos = engine === "postgres" ? [repo, ...extra.map((h) => createOutboxRepoPg(h))] : [repo, repo, repo];
      const claimedBy = repos.map(() => [] as string[]);
      await Promise.all(
        repos.map(async (r, i) => {
          for (;;) {
            const got = await r.claimDue({ now: at(10), limit: 4, leaseUntil: at(5 * MIN), kinds: ["event"] });
            if (got.length === 0) return;
            claimedBy[i]!.push(...got.map((m) => m.id));
          }
        }),
      );
      const all = claimedBy.flat();
      expect(all.length).toBe(rows.length);
      expect(new Set(all).size).toBe(rows.length);
      if (engine === "postgres") {
        // The pools really interleaved (otherwise this test proves nothing about locking).
        expect(claimedBy.filter((ids) => ids.length > 0).length).toBeGreaterThan(1);
      }
    } finally {
      for (const h of extra) await h.close();
    }
  });
});
