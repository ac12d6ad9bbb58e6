// The public rate limiter on every engine (SQLite: createSqliteRateLimiter, PostgreSQL:
// createPgRateLimiter): the sliding-window rule, refused hits not counted, pruning; on PostgreSQL also
// exactness across three pools (three nodes) hitting one key at once, and the leases that keep a
// statement off most hits far from the limit.
import { afterEach, expect, test } from "bun:test";
import { openPostgres, type PgHandle } from "../../src/db/pg";
import { whileWriterElsewhere } from "../support/writer-elsewhere";
import { createSqliteRateLimiter } from "../../src/modules/abuse/rate-limit.sqlite";
import { createPgRateLimiter } from "../../src/repos.pg";
import { LEASE_DIVISOR } from "../../src/modules/abuse/rate-limit.pg";
import type { RateLimiter } from "../../src/shared/rate-limiter";
import { pgTestUrl } from "../support/pg";
import { forEachEngine, type Opened } from "./harness";

const WINDOW = 60_000;
/** The start of a window (a multiple of WINDOW). */
const W0 = 1_795_000_000_000 - (1_795_000_000_000 % WINDOW);

async function nodes(o: Opened, n: number): Promise<PgHandle[]> {
  const [row] = await o.pg!.sql<{ name: string }[]>`SELECT current_database() AS name`;
  const url = new URL(pgTestUrl()!);
  url.pathname = `/${row!.name}`;
  return Array.from({ length: n }, () => openPostgres(url.toString(), { max: 4 }));
}

forEachEngine("RateLimiter", (engine, open) => {
  let o: Opened;
  let limiter: RateLimiter & { flush?: () => void };
  const setup = async () => {
    o = await open();
    limiter = o.sqlite ? createSqliteRateLimiter(o.sqlite) : createPgRateLimiter(o.pg!);
  };
  afterEach(() => o?.close());
  const allowedOf = async (key: string, n: number, limit: number, nowMs: number) => {
    let allowed = 0;
    for (let i = 0; i < n; i++) if ((await limiter.hit(key, limit, WINDOW, nowMs)).allowed) allowed++;
    return allowed;
  };

  test("allows `limit` hits in a window, then refuses with the time to the next window; keys are separate", async () => {
    await setup();
    expect(await allowedOf("ip:a", 5, 5, W0 + 1000)).toBe(5);
    // No previous window: the wait is the rest of this one (59 s).
    expect(await limiter.hit("ip:a", 5, WINDOW, W0 + 1000)).toEqual({ allowed: false, retryAfterSeconds: 59 });
    expect(await limiter.hit("ip:b", 5, WINDOW, W0 + 1000)).toEqual({ allowed: true, retryAfterSeconds: 0 });
  });

  test("the previous window weighs by its overlap; refused hits are not counted", async () => {
    await setup();
    expect(await allowedOf("k", 15, 10, W0 + 30_000)).toBe(10); // 5 refused, not counted
    // A quarter into the next window the previous one weighs 0.75 × 10 = 7.5: two more fit (7.5 + 2 + 1 > 10 for a third).
    const next = W0 + WINDOW + 15_000;
    expect(await allowedOf("k", 5, 10, next)).toBe(2);
    // estimate 9.5 + 1 - 10 = 0.5 of the weighted 10 decays in 0.05 × 60 s = 3 s.
    expect(await limiter.hit("k", 10, WINDOW, next)).toEqual({ allowed: false, retryAfterSeconds: 3 });
    // Half a window on, the previous weighs 2.5: 2.5 + 2 + 5 new hits, the sixth refused.
    expect(await allowedOf("k", 8, 10, W0 + WINDOW + 45_000)).toBe(5);
    // Two windows on, nothing weighs any more.
    expect(await allowedOf("k", 12, 10, W0 + 3 * WINDOW)).toBe(10);
  });

  test("prune deletes counters of windows that started before the instant and counts them", async () => {
    await setup();
    await limiter.hit("a", 10, WINDOW, W0);
    await limiter.hit("b", 10, WINDOW, W0 + 1);
    await limiter.hit("a", 10, WINDOW, W0 + WINDOW);
    limiter.flush?.(); // SQLite batches its writes
    expect(await limiter.prune(W0, 1000)).toBe(0);
    // One batch deletes at most its limit.
    expect(await limiter.prune(W0 + WINDOW, 1)).toBe(1);
    expect(await limiter.prune(W0 + WINDOW, 1000)).toBe(1);
    expect(await limiter.prune(W0 + WINDOW + 1, 1000)).toBe(1);
  });

  if (engine === "sqlite") {
    test("a flush while another process holds the write lock returns at once and keeps the hits for the next flush", async () => {
      await setup();
      expect(await allowedOf("ip:busy", 3, 100, W0 + 1000)).toBe(3);
      const stored = () => o.sqlite!.sqlite.query<{ n: number }, [string]>("SELECT coalesce(sum(count), 0) AS n FROM rate_limit_counters WHERE key = ?").get("ip:busy")!.n;
      await whileWriterElsewhere({ sqliteFile: o.sqlite!.sqlite.filename }, async () => {
        const started = Date.now();
        limiter.flush!();
        // bun:sqlite would have waited the 5 s busy timeout with the process stalled.
        expect(Date.now() - started).toBeLessThan(1000);
      });
      expect(stored()).toBe(0);
      // Still this node's own: counted in its decisions, and written by the next flush.
      expect(await allowedOf("ip:busy", 100, 100, W0 + 2000)).toBe(97);
      limiter.flush!();
      expect(stored()).toBe(100);
      // Another node on the same file sees them all.
      const second = createSqliteRateLimiter(o.sqlite!);
      expect((await second.hit("ip:busy", 100, WINDOW, W0 + 3000)).allowed).toBe(false);
    });
  }

  if (engine === "postgres") {
    test("three nodes × 40 concurrent hits at limit 50: exactly 50 allowed", async () => {
      await setup();
      const pools = await nodes(o, 3);
      try {
        const limiters = pools.map(createPgRateLimiter);
        const now = W0 + 10_000;
        const decisions = await Promise.all(Array.from({ length: 120 }, (_, i) => limiters[i % 3]!.hit("ip:race", 50, WINDOW, now)));
        expect(decisions.filter((d) => d.allowed)).toHaveLength(50);
        // Every refusal says when to come back: the rest of the window, 50 s.
        expect(new Set(decisions.filter((d) => !d.allowed).map((d) => d.retryAfterSeconds))).toEqual(new Set([50]));
        const [row] = await o.pg!.sql<{ count: number }[]>`SELECT count FROM rate_limit_counters WHERE key = 'ip:race'`;
        expect(row!.count).toBe(50);
      } finally {
        await Promise.all(pools.map((p) => p.close()));
      }
    });

    test("far from the limit a node reserves a lease of room / 64 hits in one statement and allows them locally", async () => {
      await setup();
      const now = W0 + 1000;
      const counter = async () =>
        (await o.pg!.sql<{ count: number }[]>`SELECT count FROM rate_limit_counters WHERE key = 'ip:lease'`)[0]?.count ?? 0;
      expect(await limiter.hit("ip:lease", 6400, WINDOW, now)).toEqual({ allowed: true, retryAfterSeconds: 0 });
      expect(await counter()).toBe(1); // first hit: nothing known about the room, one hit
      expect((await limiter.hit("ip:lease", 6400, WINDOW, now)).allowed).toBe(true);
      expect(await counter()).toBe(1 + Math.floor(6399 / LEASE_DIVISOR)); // 1 + 99 reserved
      expect(await allowedOf("ip:lease", 98, 6400, now)).toBe(98);
      expect(await counter()).toBe(100); // the lease served them: no statement
      await limiter.hit("ip:lease", 6400, WINDOW, now);
      expect(await counter()).toBe(100 + Math.floor((6400 - 100) / LEASE_DIVISOR)); // the next lease
      // A new window drops what is left of the lease: its first hit is counted on its own row.
      await limiter.hit("ip:lease", 6400, WINDOW, W0 + WINDOW + 1000);
      const [row] = await o.pg!.sql<{ count: number }[]>`
        SELECT count FROM rate_limit_counters WHERE key = 'ip:lease' AND window_start = ${W0 + WINDOW}`;
      expect(row!.count).toBe(1);
    });

    test("three nodes with leases × 3000 concurrent hits at limit 2000: never over the limit, at most the leases held back", async () => {
      await setup();
      const pools = await nodes(o, 3);
      try {
        const limiters = pools.map(createPgRateLimiter);
        const now = W0 + 10_000;
        const decisions = await Promise.all(Array.from({ length: 3000 }, (_, i) => limiters[i % 3]!.hit("ip:leases", 2000, WINDOW, now)));
        const allowed = decisions.filter((d) => d.allowed).length;
        const [row] = await o.pg!.sql<{ count: number }[]>`SELECT count FROM rate_limit_counters WHERE key = 'ip:leases'`;
        expect(row!.count).toBeLessThanOrEqual(2000);
        expect(allowed).toBeLessThanOrEqual(row!.count);
        // Each node holds back at most one unused lease of ≤ 2000 / 64 hits.
        expect(allowed).toBeGreaterThanOrEqual(2000 - 3 * Math.floor(2000 / LEASE_DIVISOR));
        expect(decisions.filter((d) => !d.allowed).every((d) => d.retryAfterSeconds === 50)).toBe(true);
      } finally {
        await Promise.all(pools.map((p) => p.close()));
      }
    });

    test("concurrent hits with a weighted previous window stop at the same estimate as one node", async () => {
      await setup();
      const pools = await nodes(o, 3);
      try {
        const limiters = pools.map(createPgRateLimiter);
        expect(await allowedOf("ip:w", 40, 40, W0 + 59_000)).toBe(40);
        // Three quarters into the next window the previous 40 weigh 10: 30 more fit.
        const now = W0 + WINDOW + 45_000;
        const decisions = await Promise.all(Array.from({ length: 90 }, (_, i) => limiters[i % 3]!.hit("ip:w", 40, WINDOW, now)));
        expect(decisions.filter((d) => d.allowed)).toHaveLength(30);
      } finally {
        await Promise.all(pools.map((p) => p.close()));
      }
    });
  }
});
