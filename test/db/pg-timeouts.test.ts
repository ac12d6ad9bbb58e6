// A PostgreSQL transaction must not wait for ever on a session that holds its row, and a session
// that stops mid-transaction (its node stalled, or cut off from the database without the connection
// closing) must not keep its row locks until TCP keepalive notices, two hours by default on Linux.
// Every request transaction sets lock_timeout and idle_in_transaction_session_timeout on itself
// (src/db/pg.ts, TransactionTimeouts; DATABASE_LOCK_TIMEOUT_MS, DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import postgres from "postgres";
import { openPostgres } from "../../src/db/pg";
import { isDatabaseUnavailable } from "../../src/db/errors";
import { freshPgDatabase, pgTestUrl, type ScratchDatabase } from "../support/pg";

/** Settles within `ms`, or says it did not. */
async function within<T>(ms: number, work: Promise<T>): Promise<{ value?: T; error?: { code?: string }; hung?: true }> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const hang = new Promise<{ hung: true }>((resolve) => (timer = setTimeout(() => resolve({ hung: true }), ms)));
  try {
    return await Promise.race([work.then((value) => ({ value }), (error: unknown) => ({ error: error as { code?: string } })), hang]);
  } finally {
    clearTimeout(timer);
  }
}

describe.skipIf(!pgTestUrl())("PostgreSQL transaction limits", () => {
  let database: ScratchDatabase;
  let other: postgres.Sql;
  beforeAll(async () => {
    database = await freshPgDatabase("pg_timeouts");
    other = postgres(database.url, { max: 2, onnotice: () => {} });
    await other`CREATE TABLE counters (id int PRIMARY KEY, n int NOT NULL)`;
    await other`INSERT INTO counters VALUES (1, 0)`;
  });
  afterAll(async () => {
    await other?.end({ timeout: 5 });
    await database?.drop();
  });

  /** Another session takes the row's lock and keeps it until `release` is called. */
  const holdRow = async () => {
    const holder = await other.reserve();
    await holder`BEGIN`;
    await holder`SELECT n FROM counters WHERE id = 1 FOR UPDATE`;
    return async () => {
      await holder`ROLLBACK`;
      holder.release();
    };
  };

  test("waiting for a row another session holds fails after lockMs with 55P03 (a 503), instead of waiting for ever; the pool then goes on", async () => {
    const pg = openPostgres(database.url, { max: 2, timeouts: { lockMs: 300, idleMs: 10_000 } });
    const unlimited = openPostgres(database.url, { max: 1 });
    try {
      let release = await holdRow();
      const started = Date.now();
      const limited = await within(5_000, pg.sql.begin((tx) => tx`UPDATE counters SET n = n + 1 WHERE id = 1`));
      const waited = Date.now() - started;
      expect(limited.error?.code).toBe("55P03");
      expect(isDatabaseUnavailable(limited.error)).toBe(true);
      expect(waited).toBeGreaterThanOrEqual(250);
      expect(waited).toBeLessThan(3_000);
      // Without the limit the same transaction is still waiting a second later.
      const waiting = unlimited.sql.begin((tx) => tx`UPDATE counters SET n = n + 1 WHERE id = 1`);
      expect((await within(1_000, waiting)).hung).toBe(true);
      await release();
      expect((await within(5_000, waiting)).error).toBeUndefined();
      // The limited pool is sound afterwards: its next transaction commits.
      release = await holdRow();
      await release();
      await pg.sql.begin((tx) => tx`UPDATE counters SET n = n + 1 WHERE id = 1`);
      expect((await other<{ n: number }[]>`SELECT n FROM counters WHERE id = 1`)[0]!.n).toBe(2);
    } finally {
      await pg.close();
      await unlimited.close();
    }
  });

  test("a transaction left idle past idleMs is ended by the server: its row lock is freed, it fails (a 503), and the pool goes on", async () => {
    const pg = openPostgres(database.url, { max: 2, timeouts: { lockMs: 10_000, idleMs: 1_000 } });
    try {
      let resume: () => void = () => {};
      const stalled = new Promise<void>((r) => (resume = r));
      const locked = Promise.withResolvers<void>();
      const stuck = pg.sql.begin(async (tx) => {
        await tx`SELECT n FROM counters WHERE id = 1 FOR UPDATE`;
        locked.resolve();
        await stalled; // the node stops here, its transaction open
        await tx`UPDATE counters SET n = n + 100 WHERE id = 1`;
      });
      stuck.catch(() => undefined);
      await locked.promise;
      const started = Date.now();
      // Another session waits for the row: it gets it once the server ends the idle transaction.
      await other.begin(async (o) => {
        await o`SET LOCAL lock_timeout = 8000`;
        await o`SELECT n FROM counters WHERE id = 1 FOR UPDATE`;
      });
      const waited = Date.now() - started;
      expect(waited).toBeGreaterThanOrEqual(700);
      expect(waited).toBeLessThan(6_000);
      resume();
      const outcome = await within(5_000, stuck);
      expect(outcome.hung).toBeUndefined();
      expect(outcome.error).toBeDefined();
      expect(isDatabaseUnavailable(outcome.error)).toBe(true);
      // Its update never happened, and the pool serves the next statement on a new connection.
      expect((await other<{ n: number }[]>`SELECT n FROM counters WHERE id = 1`)[0]!.n).toBeLessThan(100);
      expect((await pg.sql<{ x: number }[]>`SELECT 1 AS x`)[0]!.x).toBe(1);
    } finally {
      await pg.close();
    }
  });
});
