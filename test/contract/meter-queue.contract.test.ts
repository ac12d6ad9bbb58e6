// MeterQueueRepo on every engine: due rows are claimed oldest first in bounded batches (attempts + 1,
// due again only when the claim lapses), the marks act only under the caller's claim, and on
// PostgreSQL three nodes claiming at once never take the same row.
import { afterEach, expect, test } from "bun:test";
import type { MeterEvent, MeterQueueRepo } from "../../src/modules/metering/repo";
import { newId } from "../../src/shared/ids";
import { forEachEngine, type Opened } from "./harness";
import { seedCatalog, SEED_TIME } from "./seed";
import { repoFor } from "./repos";
import { withPgUnits } from "./unit";

const later = (ms: number) => new Date(SEED_TIME.getTime() + ms);
const CLAIM = 600_000;

forEachEngine("MeterQueueRepo", (engine, open) => {
  let o: Opened;
  let repo: MeterQueueRepo;
  const setup = async () => {
    o = await open();
    repo = repoFor(o).meterQueue;
  };
  afterEach(() => o?.close());

  const row = (licenseId: string, over: Partial<MeterEvent> = {}): MeterEvent => ({
    id: newId(),
    licenseId,
    feature: "api",
    eventName: "api_calls",
    quantity: 1,
    occurredAt: SEED_TIME,
    status: "pending",
    attempts: 0,
    nextAttemptAt: SEED_TIME,
    lastError: null,
    sentAt: null,
    ...over,
  });

  test("claimDue: only pending rows due at now, oldest first, at most `limit`; claimed rows wait for the claim to lapse", async () => {
    await setup();
    const { license } = await seedCatalog(o);
    const a = row(license.id, { occurredAt: later(1), nextAttemptAt: later(1), quantity: 1 });
    const b = row(license.id, { occurredAt: later(2), nextAttemptAt: later(2), quantity: 2 });
    const c = row(license.id, { occurredAt: later(3), nextAttemptAt: later(3), quantity: 3 });
    const future = row(license.id, { occurredAt: later(4), nextAttemptAt: later(60_000) });
    const sent = row(license.id, { status: "sent", sentAt: SEED_TIME });
    const skipped = row(license.id, { status: "skipped", lastError: "no customer" });
    for (const r of [c, future, a, sent, skipped, b]) await repo.enqueue(r);

    const now = later(10);
    const first = await repo.claimDue(now, later(10 + CLAIM), 2);
    expect(first).toEqual([
      { ...a, attempts: 1, nextAttemptAt: later(10 + CLAIM) },
      { ...b, attempts: 1, nextAttemptAt: later(10 + CLAIM) },
    ]);
    expect((await repo.claimDue(now, later(10 + CLAIM), 10)).map((r) => r.id)).toEqual([c.id]);
    expect(await repo.claimDue(now, later(10 + CLAIM), 10)).toEqual([]);
    // A claim that lapsed (its drainer died) makes the row due again, with the next attempt number.
    const again = await repo.claimDue(later(10 + CLAIM), later(20 + 2 * CLAIM), 10);
    expect(again.map((r) => [r.id, r.attempts])).toEqual([
      [a.id, 2],
      [b.id, 2],
      [c.id, 2],
      [future.id, 1],
    ]);
  });

  test("marks act only under the caller's claim; retryLater keeps the row pending until its time", async () => {
    await setup();
    const { license } = await seedCatalog(o);
    const r1 = row(license.id, { occurredAt: later(1) });
    const r2 = row(license.id, { occurredAt: later(2) });
    const r3 = row(license.id, { occurredAt: later(3) });
    for (const r of [r1, r2, r3]) await repo.enqueue(r);
    const claimed = await repo.claimDue(later(5), later(5 + CLAIM), 10);
    expect(claimed.map((r) => r.attempts)).toEqual([1, 1, 1]);

    // A stale claim (attempts 0) cannot write; the current one can, once.
    expect(await repo.markSent(r1.id, 0, later(6))).toBe(false);
    expect(await repo.markSent(r1.id, 1, later(6))).toBe(true);
    expect(await repo.markSent(r1.id, 1, later(7))).toBe(false);
    expect(await repo.markSkipped(r2.id, 1, "no Stripe customer")).toBe(true);
    expect(await repo.retryLater(r2.id, 1, later(100), "x")).toBe(false);
    expect(await repo.retryLater(r3.id, 1, later(30_000), "503: down")).toBe(true);

    const rows = await repo.listByLicense(license.id);
    expect(rows.map((r) => [r.id, r.status, r.attempts, r.sentAt, r.lastError])).toEqual([
      [r1.id, "sent", 1, later(6), null],
      [r2.id, "skipped", 1, null, "no Stripe customer"],
      [r3.id, "pending", 1, null, "503: down"],
    ]);
    expect(await repo.claimDue(later(29_999), later(29_999 + CLAIM), 10)).toEqual([]);
    const retried = await repo.claimDue(later(30_000), later(30_000 + CLAIM), 10);
    expect(retried.map((r) => [r.id, r.attempts, r.lastError])).toEqual([[r3.id, 2, "503: down"]]);
    // The earlier claim's fence no longer holds.
    expect(await repo.markSent(r3.id, 1, later(30_001))).toBe(false);
    expect(await repo.markSent(r3.id, 2, later(30_001))).toBe(true);
    expect(await repo.listByLicense(newId())).toEqual([]);
  });

  if (engine === "postgres") {
    test("three nodes claiming at once never take the same row", async () => {
      await setup();
      const { license } = await seedCatalog(o);
      const ids = new Set<string>();
      for (let i = 0; i < 120; i++) {
        const r = row(license.id, { occurredAt: later(i), nextAttemptAt: later(i) });
        ids.add(r.id);
        await repo.enqueue(r);
      }
      // Each claim in its own unit of work, as the drain makes it (metering/service.ts).
      const claims = await withPgUnits(o, 3, (units) =>
        Promise.all(Array.from({ length: 12 }, (_, i) => units[i % 3]!((r) => r.meterQueue.claimDue(later(1000), later(1000 + CLAIM), 15)))),
      );
      const taken = claims.flat().map((r) => r.id);
      expect(new Set(taken).size).toBe(taken.length);
      expect(taken.length).toBe(120);
      expect(claims.flat().every((r) => r.attempts === 1)).toBe(true);
      expect([...ids].every((id) => taken.includes(id))).toBe(true);
    });
  }
});
