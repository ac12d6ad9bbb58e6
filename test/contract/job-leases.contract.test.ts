// JobLeaseRepo on every engine: one run per scheduled slot across nodes, fenced finishes, admin runs.
import { afterEach, expect, test } from "bun:test";
import type { JobLeaseRepo } from "../../src/jobs/lease";
import { createJobLeaseRepo } from "../../src/jobs/lease.sql";
import { pgQueryDialect } from "../../src/db/dialect/query.pg";
import { forEachEngine, type Opened } from "./harness";
import { repoFor } from "./repos";
import { morePools } from "./support-pg";

const T0 = new Date("2026-11-21T08:00:00.000Z");
const at = (ms: number) => new Date(T0.getTime() + ms);
const MIN = 60_000;

forEachEngine("JobLeaseRepo", (engine, open) => {
  let o: Opened;
  let repo: JobLeaseRepo;
  const setup = async () => {
    o = await open();
    repo = repoFor(o).jobLeases;
  };
  afterEach(() => o?.close());

  test("a scheduled slot is claimed once: refused while held, and again after it finished", async () => {
    await setup();
    expect(await repo.list()).toEqual([]);
    expect(await repo.claim("p", "node-a", T0, at(5 * MIN), T0)).toEqual({ fence: 1 });
    expect(await repo.list()).toEqual([
      { name: "p", owner: "node-a", leaseUntil: at(5 * MIN), fence: 1, lastSlotAt: T0, lastStartedAt: T0, lastFinishedAt: null, lastResult: null },
    ]);
    // Another node, same slot, lease held.
    expect(await repo.claim("p", "node-b", T0, at(5 * MIN + 1), at(1))).toBeNull();
    expect(await repo.finish("p", "node-a", 1, { status: "ok", result: { deleted: 3 } }, at(10))).toBe(true);
    // The lease is free, but the slot already ran.
    expect(await repo.claim("p", "node-b", T0, at(5 * MIN + 20), at(20))).toBeNull();
    // An earlier slot (a late node) is refused too.
    expect(await repo.claim("p", "node-b", at(-MIN), at(5 * MIN + 20), at(20))).toBeNull();
    expect(await repo.list()).toEqual([
      { name: "p", owner: null, leaseUntil: null, fence: 1, lastSlotAt: T0, lastStartedAt: T0, lastFinishedAt: at(10), lastResult: { status: "ok", result: { deleted: 3 } } },
    ]);
    // The next slot.
    expect(await repo.claim("p", "node-b", at(MIN), at(6 * MIN), at(MIN))).toEqual({ fence: 2 });
    const [row] = await repo.list();
    expect(row).toMatchObject({ owner: "node-b", fence: 2, lastSlotAt: at(MIN), lastStartedAt: at(MIN), lastFinishedAt: at(10) });
  });

  test("an expired lease is taken over by the next slot; the late finisher cannot write", async () => {
    await setup();
    expect(await repo.claim("p", "node-a", T0, at(MIN), T0)).toEqual({ fence: 1 });
    // Next slot while node-a still holds an unexpired lease: refused.
    expect(await repo.claim("p", "node-b", at(MIN - 1), at(2 * MIN), at(MIN - 1))).toBeNull();
    // At the lease's end it is free again.
    expect(await repo.claim("p", "node-b", at(MIN), at(2 * MIN), at(MIN))).toEqual({ fence: 2 });
    expect(await repo.finish("p", "node-a", 1, { status: "late" }, at(MIN + 5))).toBe(false);
    // Neither a wrong owner nor a wrong fence may finish.
    expect(await repo.finish("p", "node-a", 2, { status: "wrong owner" }, at(MIN + 5))).toBe(false);
    expect(await repo.finish("p", "node-b", 1, { status: "wrong fence" }, at(MIN + 5))).toBe(false);
    expect((await repo.list())[0]).toMatchObject({ owner: "node-b", fence: 2, lastFinishedAt: null, lastResult: null });
    expect(await repo.finish("p", "node-b", 2, { status: "ok" }, at(MIN + 6))).toBe(true);
    expect((await repo.list())[0]).toMatchObject({ owner: null, leaseUntil: null, fence: 2, lastFinishedAt: at(MIN + 6), lastResult: { status: "ok" } });
    // A finished lease cannot be finished twice.
    expect(await repo.finish("p", "node-b", 2, { status: "again" }, at(MIN + 7))).toBe(false);
  });

  test("claimNow (admin run) needs only a free lease and leaves the slot record alone", async () => {
    await setup();
    // Never claimed: creates the row without a slot.
    expect(await repo.claimNow("p", "admin-node", at(MIN), T0)).toEqual({ fence: 1 });
    expect((await repo.list())[0]).toMatchObject({ owner: "admin-node", lastSlotAt: null, lastStartedAt: T0 });
    // Held: neither an admin run nor a scheduled slot gets it.
    expect(await repo.claimNow("p", "other", at(MIN + 1), at(1))).toBeNull();
    expect(await repo.claim("p", "other", at(1), at(MIN + 1), at(1))).toBeNull();
    expect(await repo.finish("p", "admin-node", 1, { status: "ok" }, at(2))).toBe(true);
    // A scheduled slot runs after the admin run, even one earlier than the admin run's start.
    expect(await repo.claim("p", "node-a", at(-MIN), at(MIN), at(3))).toEqual({ fence: 2 });
    expect(await repo.finish("p", "node-a", 2, { status: "ok" }, at(4))).toBe(true);
    // An admin run after that slot ran is allowed and does not move last_slot_at.
    expect(await repo.claimNow("p", "admin-node", at(MIN), at(5))).toEqual({ fence: 3 });
    expect((await repo.list())[0]).toMatchObject({ owner: "admin-node", fence: 3, lastSlotAt: at(-MIN), lastStartedAt: at(5) });
    // An expired admin lease can be taken over.
    expect(await repo.claimNow("p", "other", at(3 * MIN), at(MIN + 5))).toEqual({ fence: 4 });
  });

  test("list is in byte order of names, one row per pass", async () => {
    await setup();
    for (const name of ["b", "a", "B", "_x", "a-b"]) expect(await repo.claimNow(name, "n", at(MIN), T0)).toEqual({ fence: 1 });
    expect((await repo.list()).map((l) => l.name)).toEqual(["B", "_x", "a", "a-b", "b"]);
  });

  test("three claimers racing for each of 15 slots: exactly one wins each", async () => {
    await setup();
    // PostgreSQL: three pools on one database, like three nodes. SQLite: three calls in one process
    // (cannot interleave; the multi-process test covers SQLite across processes).
    const extra = engine === "postgres" ? await morePools(o, 2) : [];
    try {
      const repos = engine === "postgres" ? [repo, ...extra.map((h) => createJobLeaseRepo(pgQueryDialect(h)))] : [repo, repo, repo];
      const fences: number[] = [];
      for (let slot = 0; slot < 15; slot++) {
        const now = at(slot * MIN);
        const results = await Promise.all(repos.map((r, i) => r.claim("race", `node-${i}`, now, at(slot * MIN + 30_000), now)));
        const winners = results.filter((r) => r !== null);
        expect(winners.length).toBe(1);
        fences.push(winners[0]!.fence);
        const winner = results.findIndex((r) => r !== null);
        expect(await repos[winner]!.finish("race", `node-${winner}`, winners[0]!.fence, { slot }, at(slot * MIN + 1))).toBe(true);
      }
      expect(fences).toEqual(Array.from({ length: 15 }, (_, i) => i + 1));
    } finally {
      for (const h of extra) await h.close();
    }
  });
});
