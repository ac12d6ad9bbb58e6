// BruteForceRepo on every engine: read, atomic read-decide-write of one address, pruning idle rows;
// on PostgreSQL also concurrent failures of one address from three pools (three nodes).
import { afterEach, expect, test } from "bun:test";
import { openPostgres, type PgHandle } from "../../src/db/pg";
import { createBruteForceRepoPg } from "../../src/modules/abuse/repo.pg";
import type { BruteForceRepo, BruteForceState } from "../../src/modules/abuse/repo";
import { pgTestUrl } from "../support/pg";
import { forEachEngine, type Opened } from "./harness";
import { repoFor } from "./repos";

const t0 = new Date("2026-11-21T08:00:00.000Z");
const after = (ms: number) => new Date(t0.getTime() + ms);
const LONG_AGO = new Date(0);

/** A decide that counts one more failure at `at`; records what it saw. */
function counting(ip: string, at: Date, seen: (BruteForceState | null)[] = []) {
  return (current: BruteForceState | null): BruteForceState => {
    seen.push(current);
    return {
      ip,
      fails: (current?.fails ?? 0) + 1,
      windowStartedAt: current?.windowStartedAt ?? at,
      level: current?.level ?? 0,
      lockedUntil: current?.lockedUntil ?? null,
      updatedAt: at,
    };
  };
}

async function nodes(o: Opened, n: number): Promise<PgHandle[]> {
  const [row] = await o.pg!.sql<{ name: string }[]>`SELECT current_database() AS name`;
  const url = new URL(pgTestUrl()!);
  url.pathname = `/${row!.name}`;
  return Array.from({ length: n }, () => openPostgres(url.toString(), { max: 4 }));
}

forEachEngine("BruteForceRepo", (engine, open) => {
  let o: Opened;
  let repo: BruteForceRepo;
  const setup = async () => {
    o = await open();
    repo = repoFor(o).bruteForce;
  };
  afterEach(() => o?.close());

  test("recordFailure hands decide the stored state (null at first) and stores what it returns", async () => {
    await setup();
    expect(await repo.get("203.0.113.7")).toBeNull();
    const seen: (BruteForceState | null)[] = [];
    const first = await repo.recordFailure("203.0.113.7", counting("203.0.113.7", t0, seen), LONG_AGO);
    expect(first).toEqual({ ip: "203.0.113.7", fails: 1, windowStartedAt: t0, level: 0, lockedUntil: null, updatedAt: t0 });
    expect(await repo.get("203.0.113.7")).toEqual(first);

    const locked: BruteForceState = { ip: "203.0.113.7", fails: 0, windowStartedAt: after(5), level: 2, lockedUntil: after(60_000), updatedAt: after(5) };
    expect(await repo.recordFailure("203.0.113.7", (c) => (seen.push(c), locked), LONG_AGO)).toEqual(locked);
    expect(seen).toEqual([null, first]);
    expect(await repo.get("203.0.113.7")).toEqual(locked);
    expect(await repo.get("203.0.113.8")).toBeNull();
  });

  test("a decide that throws writes nothing", async () => {
    await setup();
    const boom = () => {
      throw new Error("refused");
    };
    await expect(repo.recordFailure("198.51.100.1", boom, LONG_AGO)).rejects.toThrow("refused");
    expect(await repo.get("198.51.100.1")).toBeNull();
    await repo.recordFailure("198.51.100.1", counting("198.51.100.1", t0), LONG_AGO);
    await expect(repo.recordFailure("198.51.100.1", boom, LONG_AGO)).rejects.toThrow("refused");
    expect((await repo.get("198.51.100.1"))?.fails).toBe(1);
  });

  test("recordFailure prunes other addresses idle since pruneBefore, unless still locked past it", async () => {
    await setup();
    await repo.recordFailure("10.0.0.1", counting("10.0.0.1", t0), LONG_AGO); // idle
    await repo.recordFailure("10.0.0.2", () => ({ ip: "10.0.0.2", fails: 0, windowStartedAt: t0, level: 1, lockedUntil: after(10_000), updatedAt: t0 }), LONG_AGO);
    await repo.recordFailure("10.0.0.3", counting("10.0.0.3", after(5000)), LONG_AGO); // recent
    await repo.recordFailure("10.0.0.4", counting("10.0.0.4", after(6000)), after(5000));
    expect(await repo.get("10.0.0.1")).toBeNull();
    expect(await repo.get("10.0.0.2")).not.toBeNull(); // locked past pruneBefore
    expect(await repo.get("10.0.0.3")).not.toBeNull(); // updated at pruneBefore: not before it
    expect(await repo.get("10.0.0.4")).not.toBeNull();
  });

  test("prune deletes rows idle and unlocked since the instant and counts them", async () => {
    await setup();
    await repo.recordFailure("10.0.1.1", counting("10.0.1.1", t0), LONG_AGO);
    await repo.recordFailure("10.0.1.2", counting("10.0.1.2", after(1000)), LONG_AGO);
    await repo.recordFailure("10.0.1.3", () => ({ ip: "10.0.1.3", fails: 0, windowStartedAt: t0, level: 1, lockedUntil: after(3000), updatedAt: t0 }), LONG_AGO);
    expect(await repo.prune(after(1000), 0)).toBe(0); // one batch deletes at most its limit
    expect(await repo.prune(after(1000), 1000)).toBe(1);
    expect(await repo.get("10.0.1.1")).toBeNull();
    expect(await repo.prune(after(3000), 1000)).toBe(1); // 10.0.1.3 is locked until exactly 3000
    expect(await repo.get("10.0.1.3")).not.toBeNull();
    expect(await repo.prune(after(3001), 1000)).toBe(1);
    expect(await repo.prune(after(99_999), 1000)).toBe(0);
  });

  if (engine === "postgres") {
    test("40 concurrent failures of one address from three nodes are all counted, each prior state seen once", async () => {
      await setup();
      const pools = await nodes(o, 3);
      try {
        const repos = pools.map(createBruteForceRepoPg);
        const seen: (BruteForceState | null)[] = [];
        const ip = "192.0.2.99";
        await Promise.all(Array.from({ length: 40 }, (_, i) => repos[i % 3]!.recordFailure(ip, counting(ip, t0, seen), LONG_AGO)));
        expect((await repo.get(ip))?.fails).toBe(40);
        expect(seen.map((s) => s?.fails ?? 0).sort((a, b) => a - b)).toEqual(Array.from({ length: 40 }, (_, i) => i));
        expect(seen.filter((s) => s === null)).toHaveLength(1);
      } finally {
        await Promise.all(pools.map((p) => p.close()));
      }
    });

    test("concurrent failures of many idle addresses that prune each other do not deadlock", async () => {
      await setup();
      const ips = Array.from({ length: 24 }, (_, i) => `192.0.2.${i}`);
      for (const ip of ips) await repo.recordFailure(ip, counting(ip, t0), LONG_AGO);
      const pools = await nodes(o, 3);
      try {
        const repos = pools.map(createBruteForceRepoPg);
        // Every address is idle before after(1); each call writes its own row and prunes the others.
        await Promise.all(ips.map((ip, i) => repos[i % 3]!.recordFailure(ip, counting(ip, after(10)), after(1))));
        // Each address's row is gone (pruned by a later call) or holds this failure: its second, or its
        // first when another call pruned the old row before this one locked it.
        for (const ip of ips) {
          const state = await repo.get(ip);
          if (state) {
            expect(state.updatedAt).toEqual(after(10));
            expect([1, 2]).toContain(state.fails);
          }
        }
      } finally {
        await Promise.all(pools.map((p) => p.close()));
      }
    });
  }
});
