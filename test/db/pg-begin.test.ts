// Transactions on PostgreSQL run on a connection of their own (src/db/pg.ts, reservedBegin), also when
// every pooled connection is busy and their pipelines are full: the case where postgres.js's own
// sql.begin sends BEGIN on a connection it has not reserved (porsager/postgres#823): the transaction
// fails with UNSAFE_TRANSACTION and the connection is left inside a transaction that other queries
// then join.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import postgres from "postgres";
import { sql as q } from "drizzle-orm";
import { openPostgres, type PgHandle } from "../../src/db/pg";
import { freshPgDatabase, pgTestUrl, type ScratchDatabase } from "../support/pg";

/** Three connections held by a sleep, then plain queries and transactions interleaved behind them. */
async function crowd(
  pool: Pick<PgHandle["sql"], "unsafe">,
  transaction: (i: number) => Promise<unknown>,
): Promise<PromiseSettledResult<unknown>[]> {
  const busy = [0, 1, 2].map(() => pool.unsafe("SELECT pg_sleep(0.15)").execute());
  await Bun.sleep(40); // the three are connected and sleeping
  const mixed: Promise<unknown>[] = [];
  for (let i = 0; i < 5; i++) {
    // Executed now, in this order, so each transaction's BEGIN queues right behind a plain query.
    mixed.push(pool.unsafe(`SELECT ${i}::int AS i`).execute());
    mixed.push(transaction(i));
  }
  const settled = await Promise.allSettled([...busy, ...mixed]);
  return settled.filter((_, k) => k >= 3 && (k - 3) % 2 === 1);
}

const failures = (results: PromiseSettledResult<unknown>[]) =>
  results.flatMap((r) => (r.status === "rejected" ? [String((r.reason as { code?: string }).code ?? r.reason)] : []));

describe.skipIf(!pgTestUrl())("PostgreSQL transactions under a full pool", () => {
  let database: ScratchDatabase;
  let handle: PgHandle;
  beforeAll(async () => {
    database = await freshPgDatabase("pg_begin");
    // A pipeline of one: the pool is full as soon as each connection has a query waiting.
    handle = openPostgres(database.url, { max: 3, maxPipeline: 1 });
    await handle.sql`CREATE TABLE marks (n int NOT NULL)`;
  });
  afterAll(async () => {
    await handle?.close();
    await database?.drop();
  });

  const idleInTransaction = async () =>
    (
      await handle.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM pg_stat_activity
        WHERE datname = current_database() AND state LIKE 'idle in transaction%' AND pid <> pg_backend_pid()`
    )[0]!.n;

  /** Three transactions at once, each holding its connection until all three have one: the pool still has its three. */
  const threeAtOnce = async () => {
    let started = 0;
    let all: () => void = () => {};
    const together = new Promise<void>((r) => (all = r));
    const pids = await Promise.all(
      [0, 1, 2].map(() =>
        handle.sql.begin(async (tx) => {
          const [row] = await tx<{ pid: number }[]>`SELECT pg_backend_pid() AS pid`;
          if (++started === 3) all();
          await together;
          return row!.pid;
        }),
      ),
    );
    return new Set(pids).size;
  };

  test("the scenario breaks postgres.js's own sql.begin (if this fails, postgres.js fixed #823 and reservedBegin can go)", async () => {
    const raw = postgres(database.url, { max: 3, max_pipeline: 1, onnotice: () => {} } as postgres.Options<{}>);
    try {
      const errors: string[] = [];
      for (let round = 0; round < 5; round++) errors.push(...failures(await crowd(raw, (i) => raw.begin(async (tx) => tx`SELECT ${i}::int AS t`))));
      expect(errors).toContain("UNSAFE_TRANSACTION");
    } finally {
      await raw.end({ timeout: 1 });
    }
  }, 30_000);

  test("drizzle transactions and sql.begin all commit, each on its own connection, and none is left open", async () => {
    for (let round = 0; round < 5; round++) {
      const results = await crowd(handle.sql, (i) =>
        i % 2 === 0
          ? handle.db.transaction(async (tx) => {
              await tx.execute(q`INSERT INTO marks (n) VALUES (${round * 10 + i})`);
              // Nested: a savepoint, rolled back alone.
              await tx.transaction(async (inner) => {
                await inner.execute(q`INSERT INTO marks (n) VALUES (${-1})`);
                throw new Error("undo the savepoint");
              }).catch(() => undefined);
            })
          : handle.sql.begin(async (tx) => tx`INSERT INTO marks (n) VALUES (${round * 10 + i})`),
      );
      expect(failures(results)).toEqual([]);
      expect(await idleInTransaction()).toBe(0);
    }
    const rows = await handle.sql<{ n: number }[]>`SELECT n FROM marks ORDER BY n`;
    expect(rows.map((r) => r.n)).toEqual([0, 1, 2, 3, 4, 10, 11, 12, 13, 14, 20, 21, 22, 23, 24, 30, 31, 32, 33, 34, 40, 41, 42, 43, 44]);
  }, 30_000);

  test("a failing callback rolls back and frees its connection; the options string sets the isolation level", async () => {
    await expect(
      handle.sql.begin(async (tx) => {
        await tx`INSERT INTO marks (n) VALUES (999)`;
        throw new Error("abort");
      }),
    ).rejects.toThrow("abort");
    expect(await handle.sql`SELECT 1 FROM marks WHERE n = 999`).toHaveLength(0);
    const [level] = await handle.sql.begin("isolation level serializable", (tx) => tx<{ l: string }[]>`SELECT current_setting('transaction_isolation') AS l`);
    expect(level).toEqual({ l: "serializable" });
    expect(await threeAtOnce()).toBe(3);
    expect(await idleInTransaction()).toBe(0);
  }, 30_000);
});
