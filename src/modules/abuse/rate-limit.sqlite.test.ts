import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDatabase } from "../../db/client";
import { runMigrations } from "../../db/migrate";
import { createSqliteRateLimiter, SHARED_FLUSH_INTERVAL_MS } from "./rate-limit.sqlite";

const MIN = 60_000;
const dir = mkdtempSync(join(tmpdir(), "keyward-ratelimit-"));
const path = join(dir, "db.sqlite");
const setup = openDatabase(path);
runMigrations(setup.sqlite, 0);
// Two connections to one file: two nodes.
const nodeA = openDatabase(path);
const nodeB = openDatabase(path);
afterAll(() => {
  for (const h of [setup, nodeA, nodeB]) h.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("SQLite rate limiter shared by two nodes", () => {
  test("one node's hits, once flushed, spend the other node's budget; other keys are independent", async () => {
    const a = createSqliteRateLimiter(nodeA);
    const b = createSqliteRateLimiter(nodeB);
    const t0 = 100 * MIN;
    for (let i = 0; i < 3; i++) expect((await a.hit("ip-1", 5, MIN, t0 + i)).allowed).toBe(true);
    a.flush();
    // b meets ip-1 for the first time: it reads a's 3 from the table, so 2 remain.
    expect((await b.hit("ip-1", 5, MIN, t0 + 10)).allowed).toBe(true);
    expect((await b.hit("ip-1", 5, MIN, t0 + 11)).allowed).toBe(true);
    const refused = (await b.hit("ip-1", 5, MIN, t0 + 12));
    expect(refused).toEqual({ allowed: false, retryAfterSeconds: expect.any(Number) });
    expect((await b.hit("ip-2", 5, MIN, t0 + 13)).allowed).toBe(true);
    // a reads ip-1 again once its numbers are a flush interval old, and then sees b's hits too.
    b.flush();
    expect((await a.hit("ip-1", 5, MIN, t0 + SHARED_FLUSH_INTERVAL_MS + 20)).allowed).toBe(false);
  });

  test("a new window starts fresh, with the previous window weighted by its overlap", async () => {
    const a = createSqliteRateLimiter(nodeA);
    const b = createSqliteRateLimiter(nodeB);
    const t0 = 200 * MIN;
    for (let i = 0; i < 10; i++) expect((await a.hit("k", 10, MIN, t0 + i)).allowed).toBe(true);
    a.flush();
    // Half way into the next window, half of the previous 10 still weighs: 5 more fit on b.
    const half = t0 + MIN + MIN / 2;
    let allowed = 0;
    for (let i = 0; i < 10; i++) if ((await b.hit("k", 10, MIN, half + i)).allowed) allowed += 1;
    expect(allowed).toBe(5);
    // Two windows later nothing weighs any more.
    expect((await b.hit("k", 10, MIN, t0 + 3 * MIN)).allowed).toBe(true);
  });

  test("a flush while a DataStore.transaction holds the connection waits for it, so a rollback loses no count", () => {
    const h = openDatabase(path);
    try {
      const c = createSqliteRateLimiter(h);
      const count = () => (h.sqlite.query("SELECT count FROM rate_limit_counters WHERE key = 'in-tx'").get() as { count: number } | null)?.count ?? 0;
      h.sqlite.exec("BEGIN IMMEDIATE");
      c.hit("in-tx", 5, MIN, 400 * MIN);
      c.flush();
      h.sqlite.exec("ROLLBACK");
      expect(count()).toBe(0);
      c.flush();
      expect(count()).toBe(1);
    } finally {
      h.close();
    }
  });

  test("flushing after the database closed loses the counts but never throws", async () => {
    const h = openDatabase(path);
    const c = createSqliteRateLimiter(h);
    c.hit("z", 5, MIN, 300 * MIN);
    h.close();
    expect(() => c.flush()).not.toThrow();
  });
});
