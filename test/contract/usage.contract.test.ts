// UsageRepo on every engine: the guarded counter (limit, unlimited, oversize), the usage event, the
// license re-check, the Idempotency outcome, used() and the audited reset; the meter event an
// accepted report of a metered feature queues in the same transaction; and on PostgreSQL 300
// reports of 1 from 3 nodes against a quota of 100.
import { afterEach, expect, test } from "bun:test";
import type { ConsumeChange, ConsumeInput, ConsumeResult, UsageRepo } from "../../src/modules/usage/repo";
import { event } from "../../src/modules/outbox/effects";
import { crossesWarning } from "../../src/modules/usage/events";
import type { LicenseAccess } from "../../src/modules/license-api/repo";
import { ClaimLostError } from "../../src/modules/idempotency/repo";
import { AppError } from "../../src/shared/errors";
import { forEachEngine, type Opened } from "./harness";
import { seedCatalog, seedLicense, SEED_TIME } from "./seed";
import { repoFor } from "./repos";
import { writerElsewhere } from "../support/writer-elsewhere";
import { BUSY_TIMEOUT_MS } from "../../src/db/client";
import { withPgTransaction } from "../../src/db/transaction.pg";
import { createPgRepos } from "../../src/repos.pg";
import { audited, auditRows, claimState, completion, countRows, outboxRows, pgNodes, seedClaim, usageEvents } from "./inspect";

const later = (ms: number) => new Date(SEED_TIME.getTime() + ms);
const mustBeActive = (cur: LicenseAccess | null) => {
  if (!cur || cur.license.status !== "active") throw new AppError("LICENSE_INACTIVE");
};

forEachEngine("UsageRepo", (engine, open) => {
  let o: Opened;
  let repo: UsageRepo;
  const setup = async () => {
    o = await open();
    repo = repoFor(o).usage;
  };
  afterEach(() => o?.close());
  const input = (licenseId: string, over: Partial<ConsumeInput> = {}): ConsumeInput => ({
    licenseId,
    feature: "api",
    periodKey: "2026-11",
    quantity: 1,
    limit: 10,
    metadata: null,
    at: later(1000),
    ...over,
  });

  test("consume counts under the limit, refuses what does not fit, and writes one event per accepted report", async () => {
    await setup();
    const { license } = await seedCatalog(o);
    let seen: LicenseAccess | null = null;
    expect(await repo.consume(input(license.id, { quantity: 4, metadata: { job: "a", n: [1, 2] } }), (cur) => { seen = cur; })).toEqual({ accepted: true, used: 4 });
    expect(seen!).toMatchObject({ license: { id: license.id } });
    expect(await repo.consume(input(license.id, { quantity: 6, at: later(2000) }), mustBeActive)).toEqual({ accepted: true, used: 10 });
    expect(await repo.consume(input(license.id, { quantity: 1 }), mustBeActive)).toEqual({ accepted: false, used: 10 });
    // Other periods and features have their own counters.
    expect(await repo.consume(input(license.id, { periodKey: "2026-12" }), mustBeActive)).toEqual({ accepted: true, used: 1 });
    expect(await repo.consume(input(license.id, { feature: "export", quantity: 3, limit: 3 }), mustBeActive)).toEqual({ accepted: true, used: 3 });
    expect(await repo.used(license.id, "api", "2026-11")).toBe(10);
    expect(await repo.used(license.id, "api", "2026-12")).toBe(1);
    expect(await repo.used(license.id, "api", "1999-01")).toBe(0);
    expect(await repo.used("nope", "api", "2026-11")).toBe(0);
    const events = await usageEvents(o, license.id);
    expect(events.filter((e) => e.feature === "api" && e.periodKey === "2026-11")).toEqual([
      { feature: "api", periodKey: "2026-11", quantity: 4, metadata: { job: "a", n: [1, 2] }, createdAt: later(1000) },
      { feature: "api", periodKey: "2026-11", quantity: 6, metadata: null, createdAt: later(2000) },
    ]);
    expect(events.length).toBe(4);
  });

  test("a quantity above the limit is refused without creating a counter; null limit is unlimited", async () => {
    await setup();
    const { license } = await seedCatalog(o);
    expect(await repo.consume(input(license.id, { quantity: 11 }), mustBeActive)).toEqual({ accepted: false, used: 0 });
    expect(await countRows(o, "usageCounters", license.id)).toBe(0);
    expect(await repo.consume(input(license.id, { quantity: 10 }), mustBeActive)).toEqual({ accepted: true, used: 10 });
    expect(await repo.consume(input(license.id, { quantity: 11 }), mustBeActive)).toEqual({ accepted: false, used: 10 });
    expect(await repo.consume(input(license.id, { feature: "free", quantity: 5_000_000_000, limit: null }), mustBeActive)).toEqual({ accepted: true, used: 5_000_000_000 });
    expect(await repo.consume(input(license.id, { feature: "free", quantity: 7, limit: null }), mustBeActive)).toEqual({ accepted: true, used: 5_000_000_007 });
    expect(await countRows(o, "usageEvents", license.id)).toBe(3);
  });

  test("a throwing check writes nothing", async () => {
    await setup();
    const { license, product, plan } = await seedCatalog(o);
    const suspended = await seedLicense(o, product.id, plan.id, { status: "suspended" });
    await expect(repo.consume(input(suspended.id), mustBeActive)).rejects.toBeInstanceOf(AppError);
    let seen: LicenseAccess | null | undefined;
    await expect(repo.consume(input("nope"), (cur) => { seen = cur; mustBeActive(cur); })).rejects.toBeInstanceOf(AppError);
    expect(seen).toBeNull();
    expect(await countRows(o, "usageCounters")).toBe(0);
    expect(await countRows(o, "usageEvents")).toBe(0);
    expect((await repo.consume(input(license.id), mustBeActive)).accepted).toBe(true);
  });

  test("consume stores the Idempotency outcome with the increment; a lost claim undoes increment and event", async () => {
    await setup();
    const { license } = await seedCatalog(o);
    const claimedAt = later(5);
    const scope = await seedClaim(o, claimedAt);
    expect(await repo.consume(input(license.id, { quantity: 2 }), mustBeActive, (r) => completion(scope, claimedAt, `used=${r.used}`))).toEqual({ accepted: true, used: 2 });
    expect(await claimState(o, scope)).toEqual({ state: "done", responseStatus: 200, responseSealed: "used=2" });
    await expect(repo.consume(input(license.id, { quantity: 3 }), mustBeActive, () => completion(scope, claimedAt, "again"))).rejects.toBeInstanceOf(ClaimLostError);
    expect(await repo.used(license.id, "api", "2026-11")).toBe(2);
    expect(await countRows(o, "usageEvents", license.id)).toBe(1);
    // A refused report stores nothing through the recorder (the service completes it separately).
    let recorded = false;
    const scope2 = await seedClaim(o, claimedAt);
    expect(await repo.consume(input(license.id, { quantity: 9 }), mustBeActive, () => ((recorded = true), completion(scope2, claimedAt, "x")))).toEqual({ accepted: false, used: 2 });
    expect(recorded).toBe(false);
    expect(await claimState(o, scope2)).toMatchObject({ state: "in_flight" });
  });

  test("reports at once in one process (one batch) are each decided as if alone: a refusing check, a lost claim, one that does not fit affect only themselves", async () => {
    await setup();
    const { license, product, plan } = await seedCatalog(o);
    const suspended = await seedLicense(o, product.id, plan.id, { status: "suspended" });
    const claimedAt = later(5);
    const kept = await seedClaim(o, claimedAt);
    const never = { key: "never-claimed", route: "/v1/test", scope: "nobody" };
    // 3 + 4 + 2 + 1 fit the limit of 10 in any order (concurrent reports have none); 11 never fits.
    const settled = await Promise.allSettled([
      repo.consume(input(license.id, { quantity: 3 }), mustBeActive),
      repo.consume(input(suspended.id), mustBeActive),
      repo.consume(input(license.id, { quantity: 4 }), mustBeActive, (r) => completion(kept, claimedAt, `used=${r.used}`)),
      repo.consume(input(license.id, { quantity: 2 }), mustBeActive, () => completion(never, claimedAt, "x")),
      repo.consume(input(license.id, { quantity: 11 }), mustBeActive),
      repo.consume(input(license.id, { quantity: 1 }), mustBeActive),
      repo.consume(input(license.id, { feature: "export", quantity: 1, limit: 1 }), mustBeActive),
    ]);
    const outcome = (r: PromiseSettledResult<ConsumeResult>) =>
      r.status === "fulfilled" ? (r.value.accepted ? "accepted" : "refused") : r.reason instanceof ClaimLostError ? "claim lost" : (r.reason as AppError).code;
    expect(settled.map(outcome)).toEqual(["accepted", "LICENSE_INACTIVE", "accepted", "claim lost", "refused", "accepted", "accepted"]);
    const used = (i: number) => (settled[i] as PromiseFulfilledResult<ConsumeResult>).value.used;
    // The three accepted reports of "api" saw the counter one after the other: 3, 4 and 1 added in some order.
    const steps = [0, 2, 5].map((i, k) => ({ used: used(i), quantity: [3, 4, 1][k]! })).sort((a, b) => a.used - b.used);
    let total = 0;
    for (const s of steps) expect(s.used).toBe((total += s.quantity));
    expect(used(6)).toBe(1);
    expect(await repo.used(license.id, "api", "2026-11")).toBe(8);
    expect(await repo.used(license.id, "export", "2026-11")).toBe(1);
    // One event per accepted report, none for the undone or refused ones.
    expect(await countRows(o, "usageEvents", license.id)).toBe(4);
    expect(await countRows(o, "usageEvents", suspended.id)).toBe(0);
    expect(await claimState(o, kept)).toEqual({ state: "done", responseStatus: 200, responseSealed: `used=${used(2)}` });
  });

  if (engine === "sqlite") {
    test("a report waiting for its batch while another transaction holds the connection waits for that transaction to end, and is not part of it", async () => {
      await setup();
      const { license } = await seedCatalog(o);
      const db = o.sqlite!.sqlite;
      const pending = repo.consume(input(license.id, { quantity: 2 }), mustBeActive);
      // A DataStore.transaction opens before the batch runs, and stays open across event-loop turns.
      db.exec("BEGIN IMMEDIATE");
      db.exec("INSERT INTO usage_counters (license_id, feature, period_key, used, updated_at) VALUES ('" + license.id + "', 'other', '2026-11', 5, 0)");
      await new Promise((r) => setTimeout(r, 30));
      db.exec("ROLLBACK");
      // The report was written after the rollback, in its own transaction: acknowledged and kept.
      expect(await pending).toEqual({ accepted: true, used: 2 });
      expect(await repo.used(license.id, "api", "2026-11")).toBe(2);
      expect(await repo.used(license.id, "other", "2026-11")).toBe(0);
    });
  }

  if (engine === "sqlite") {
    test("a report still waiting for its batch when the database closes is rejected, and nothing throws from the timer", async () => {
      await setup();
      const { license } = await seedCatalog(o);
      const pending = repo.consume(input(license.id), mustBeActive);
      await o.close();
      await expect(pending).rejects.toBeDefined();
    });
  }

  if (engine === "sqlite") {
    test("while another process holds the write lock, reports wait without holding up the event loop, and are written once it is free", async () => {
      await setup();
      const { license } = await seedCatalog(o);
      const release = await writerElsewhere({ sqliteFile: o.sqlite!.sqlite.filename });
      let reports: Promise<ConsumeResult>[];
      try {
        reports = [1, 2, 3].map((q) => repo.consume(input(license.id, { quantity: q }), mustBeActive));
        // The event loop keeps turning (bun:sqlite's own wait would have stalled it for 5 s).
        const started = Date.now();
        await Bun.sleep(100);
        expect(Date.now() - started).toBeLessThan(1000);
        expect(await repo.used(license.id, "api", "2026-11")).toBe(0);
      } finally {
        await release();
      }
      expect(await Promise.all(reports)).toEqual([
        { accepted: true, used: 1 },
        { accepted: true, used: 3 },
        { accepted: true, used: 6 },
      ]);
      expect(await repo.used(license.id, "api", "2026-11")).toBe(6);
    });

    test("a lock held past the busy timeout fails the waiting reports as the database being busy, with nothing written", async () => {
      await setup();
      const { license } = await seedCatalog(o);
      const release = await writerElsewhere({ sqliteFile: o.sqlite!.sqlite.filename });
      try {
        const started = Date.now();
        const failed = await repo.consume(input(license.id), mustBeActive).catch((e: unknown) => e);
        expect(failed).toMatchObject({ code: "SQLITE_BUSY" });
        expect(Date.now() - started).toBeGreaterThanOrEqual(BUSY_TIMEOUT_MS);
      } finally {
        await release();
      }
      expect(await repo.used(license.id, "api", "2026-11")).toBe(0);
      expect(await repo.consume(input(license.id), mustBeActive)).toEqual({ accepted: true, used: 1 });
    }, 20_000);
  }

  test("reset deletes the named counters and audits what it reset", async () => {
    await setup();
    const { license, product, plan } = await seedCatalog(o);
    const other = await seedLicense(o, product.id, plan.id);
    await repo.consume(input(license.id, { quantity: 3, at: later(100) }), mustBeActive);
    await repo.consume(input(license.id, { feature: "export", quantity: 2, at: later(200) }), mustBeActive);
    await repo.consume(input(other.id, { quantity: 5 }), mustBeActive);
    const reset = await repo.reset(
      license.id,
      [
        { feature: "api", periodKey: "2026-11" },
        { feature: "missing", periodKey: "2026-11" },
        { feature: "export", periodKey: "2026-11" },
      ],
      (r) => audited("usage.reset", license.id, { counters: r.map((c) => `${c.feature}:${c.used}`) }),
    );
    expect(reset).toEqual([
      { licenseId: license.id, feature: "api", periodKey: "2026-11", used: 3, updatedAt: later(100) },
      { licenseId: license.id, feature: "export", periodKey: "2026-11", used: 2, updatedAt: later(200) },
    ]);
    expect(await repo.used(license.id, "api", "2026-11")).toBe(0);
    expect(await repo.used(other.id, "api", "2026-11")).toBe(5);
    expect(await auditRows(o)).toEqual([{ action: "usage.reset", entityId: license.id, changes: { counters: ["api:3", "export:2"] } }]);
    // Nothing to reset: still audited (the admin asked), empty list.
    expect(await repo.reset(license.id, [{ feature: "api", periodKey: "2026-11" }], () => audited("usage.reset", "again"))).toEqual([]);
    expect((await auditRows(o)).length).toBe(2);
    // A throwing audit keeps the counter.
    await expect(repo.reset(other.id, [{ feature: "api", periodKey: "2026-11" }], () => { throw new Error("no audit"); })).rejects.toThrow("no audit");
    expect(await repo.used(other.id, "api", "2026-11")).toBe(5);
  });

  test("effects sees each report's change; only the first refusal of a counter is firstRefusal, until a reset", async () => {
    await setup();
    const { license } = await seedCatalog(o);
    const changes: ConsumeChange[] = [];
    // Each change is written as an event, so the outbox shows what was committed with the report.
    const track = (c: ConsumeChange) => {
      changes.push(c);
      return { events: [event("quota.warning", SEED_TIME, { license_id: license.id, product_id: "p", feature: "api", period: "monthly", period_key: "2026-11", used: c.used, limit: 10 })] };
    };
    const consume = (over: Partial<ConsumeInput>) => repo.consume(input(license.id, over), mustBeActive, undefined, track);
    await consume({ quantity: 11 }); // above the limit with no counter yet: the first refusal
    await consume({ quantity: 7 });
    await consume({ quantity: 4 }); // refused again: not the first
    await consume({ quantity: 3 });
    await consume({ quantity: 1 });
    await consume({ quantity: 2, periodKey: "2026-12" }); // another period, its own counter
    await consume({ quantity: 20, periodKey: "2026-12" });
    expect(changes).toEqual([
      { accepted: false, used: 0, firstRefusal: true },
      { accepted: true, before: 0, used: 7 },
      { accepted: false, used: 7, firstRefusal: false },
      { accepted: true, before: 7, used: 10 },
      { accepted: false, used: 10, firstRefusal: false },
      { accepted: true, before: 0, used: 2 },
      { accepted: false, used: 2, firstRefusal: true },
    ]);
    expect((await outboxRows(o)).length).toBe(7);
    // The mark is not a counter: the refused first report created none.
    expect(await countRows(o, "usageCounters", license.id)).toBe(2);
    // An admin reset clears the counter and its mark: the next refusal is a first again.
    await repo.reset(license.id, [{ feature: "api", periodKey: "2026-11" }], () => audited("usage.reset", license.id));
    changes.length = 0;
    await consume({ quantity: 11 });
    await consume({ quantity: 11 });
    expect(changes).toEqual([
      { accepted: false, used: 0, firstRefusal: true },
      { accepted: false, used: 0, firstRefusal: false },
    ]);
    // A throwing effects callback undoes the report (counter, usage event and mark alike).
    await expect(repo.consume(input(license.id, { quantity: 1, periodKey: "2027-01" }), mustBeActive, undefined, () => { throw new Error("no"); })).rejects.toThrow("no");
    await expect(repo.consume(input(license.id, { quantity: 11, periodKey: "2027-01" }), mustBeActive, undefined, () => { throw new Error("no"); })).rejects.toThrow("no");
    expect(await repo.used(license.id, "api", "2027-01")).toBe(0);
    changes.length = 0;
    await consume({ quantity: 11, periodKey: "2027-01" });
    expect(changes).toEqual([{ accepted: false, used: 0, firstRefusal: true }]);
  });

  if (engine === "postgres") {
    test("300 concurrent reports of 1 from 3 nodes against a quota of 100: exactly 100 accepted", async () => {
      await setup();
      const { license } = await seedCatalog(o);
      const nodes = await pgNodes(o, 3);
      try {
        // Each accepted report sees its own before/after from the conditional increment: the 80 %
        // line is crossed by exactly one of them.
        const crossings: number[] = [];
        const results = await Promise.all(
          Array.from({ length: 300 }, (_, i) =>
            nodes.repos[i % 3]!.usage.consume(input(license.id, { limit: 100, at: later(i) }), mustBeActive, undefined, (c) => {
              if (c.accepted && crossesWarning(c.before, c.used, 100)) crossings.push(c.used);
              return {};
            }),
          ),
        );
        expect(crossings).toEqual([80]);
        const accepted = results.filter((r) => r.accepted);
        expect(accepted.length).toBe(100);
        // Each accepted report saw a distinct counter value 1..100.
        expect(accepted.map((r) => r.used).sort((a, b) => a - b)).toEqual(Array.from({ length: 100 }, (_, i) => i + 1));
        expect(results.filter((r) => !r.accepted).every((r) => r.used === 100)).toBe(true);
        expect(await repo.used(license.id, "api", "2026-11")).toBe(100);
        expect(await countRows(o, "usageEvents", license.id)).toBe(100);
      } finally {
        await nodes.close();
      }
    });

    test("60 concurrent refused reports from 3 nodes: exactly one is the first refusal", async () => {
      await setup();
      const { license } = await seedCatalog(o);
      await repo.consume(input(license.id, { quantity: 10 }), mustBeActive);
      const nodes = await pgNodes(o, 3);
      try {
        const firsts: boolean[] = [];
        await Promise.all(
          Array.from({ length: 60 }, (_, i) =>
            nodes.repos[i % 3]!.usage.consume(input(license.id, { at: later(i) }), mustBeActive, undefined, (c) => {
              if (!c.accepted) firsts.push(c.firstRefusal);
              return {};
            }),
          ),
        );
        expect(firsts.length).toBe(60);
        expect(firsts.filter(Boolean).length).toBe(1);
      } finally {
        await nodes.close();
      }
    });
  }

  // Metered billing (docs/payments.md): the meter event is queued by the usage write itself.
  test("a metered report queues one meter event with the accepted write; refused or unmetered reports queue none", async () => {
    await setup();
    const { license } = await seedCatalog(o);
    const queue = repoFor(o).meterQueue;
    expect(await repo.consume(input(license.id, { quantity: 4, meter: "api_calls" }), mustBeActive)).toEqual({ accepted: true, used: 4 });
    expect(await repo.consume(input(license.id, { quantity: 7, meter: "api_calls" }), mustBeActive)).toEqual({ accepted: false, used: 4 });
    expect(await repo.consume(input(license.id, { quantity: 2 }), mustBeActive)).toEqual({ accepted: true, used: 6 });
    expect(await repo.consume(input(license.id, { quantity: 1, meter: null, at: later(3000) }), mustBeActive)).toEqual({ accepted: true, used: 7 });
    await expect(repo.consume(input(license.id, { meter: "api_calls" }), () => { throw new AppError("LICENSE_INACTIVE"); })).rejects.toBeInstanceOf(AppError);
    const rows = await queue.listByLicense(license.id);
    expect(rows).toEqual([
      { id: expect.any(String), licenseId: license.id, feature: "api", eventName: "api_calls", quantity: 4, occurredAt: later(1000), status: "pending", attempts: 0, nextAttemptAt: later(1000), lastError: null, sentAt: null },
    ]);
  });

  test("a metered report whose Idempotency outcome cannot be stored queues nothing (one transaction)", async () => {
    await setup();
    const { license } = await seedCatalog(o);
    await expect(
      repo.consume(input(license.id, { meter: "api_calls" }), mustBeActive, () => {
        throw new ClaimLostError();
      }),
    ).rejects.toBeInstanceOf(ClaimLostError);
    expect(await repoFor(o).meterQueue.listByLicense(license.id)).toEqual([]);
    expect(await repo.used(license.id, "api", "2026-11")).toBe(0);
  });

  if (engine === "postgres") {
    test("inside a caller's transaction (no batching): the metered report is queued and rolls back with it", async () => {
      await setup();
      const { license } = await seedCatalog(o);
      await withPgTransaction(o.pg!, async (tx) => {
        expect(await createPgRepos(tx).usage.consume(input(license.id, { quantity: 2, meter: "api_calls" }), mustBeActive)).toEqual({ accepted: true, used: 2 });
      });
      await expect(
        withPgTransaction(o.pg!, async (tx) => {
          await createPgRepos(tx).usage.consume(input(license.id, { quantity: 3, meter: "api_calls" }), mustBeActive);
          throw new Error("caller failed");
        }),
      ).rejects.toThrow("caller failed");
      expect((await repoFor(o).meterQueue.listByLicense(license.id)).map((r) => r.quantity)).toEqual([2]);
    });

    test("metered reports at once from 3 nodes (batched per counter): one queued event per accepted report", async () => {
      await setup();
      const { license } = await seedCatalog(o);
      const nodes = await pgNodes(o, 3);
      try {
        const results = await Promise.all(
          Array.from({ length: 45 }, (_, i) => nodes.repos[i % 3]!.usage.consume(input(license.id, { limit: 30, meter: "api_calls", at: later(i) }), mustBeActive)),
        );
        expect(results.filter((r) => r.accepted).length).toBe(30);
        const rows = await repoFor(o).meterQueue.listByLicense(license.id);
        expect(rows.length).toBe(30);
        expect(new Set(rows.map((r) => r.id)).size).toBe(30);
        expect(await countRows(o, "usageEvents", license.id)).toBe(30);
      } finally {
        await nodes.close();
      }
    });
  }
});
