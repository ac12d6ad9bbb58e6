// A PostgreSQL connection that dies (server restart, failover, a pooler or an admin ending it) must
// cost only the statements that were on it: the pool reconnects on the next query, nothing hangs,
// nothing crashes the process, and no statement of the dead connection is answered by the new one.
// postgres.js 3.4.9 gets these wrong when a socket closes with a write still buffered, during a
// connection's start-up, or under a reserved connection (porsager/postgres#1133, #1193, #1208);
// scripts/patch-deps.mjs repairs the driver at install time (each repair is numbered there) and
// every test here fails without its repair.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Socket } from "node:net";
import postgres from "postgres";
import { openPostgres, reconnectDelaySeconds } from "../../src/db/pg";
import { freshPgDatabase, pgTestUrl, type ScratchDatabase } from "../support/pg";
import { unusedPort } from "../support/ports";

/** postgres.js's `socket` option (a factory of the pool's sockets), missing from its option types. */
const withSockets = (options: postgres.Options<{}>, socket: () => Socket): postgres.Options<{}> => ({ ...options, socket }) as postgres.Options<{}>;

/** Settles within `ms`, or says it did not (a hang is the failure these tests look for). */
async function within<T>(ms: number, work: Promise<T>): Promise<{ value?: T; error?: { code?: string; message?: string }; hung?: true }> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const hang = new Promise<{ hung: true }>((resolve) => (timer = setTimeout(() => resolve({ hung: true }), ms)));
  try {
    return await Promise.race([work.then((value) => ({ value }), (error: unknown) => ({ error: error as { code?: string; message?: string } })), hang]);
  } finally {
    clearTimeout(timer);
  }
}

describe.skipIf(!pgTestUrl())("PostgreSQL connections that die", () => {
  let database: ScratchDatabase;
  const uncaught: unknown[] = [];
  const onUncaught = (e: unknown) => uncaught.push(e);
  beforeAll(async () => {
    database = await freshPgDatabase("pg_reconnect");
    process.on("uncaughtException", onUncaught);
    process.on("unhandledRejection", onUncaught);
  });
  afterAll(async () => {
    process.off("uncaughtException", onUncaught);
    process.off("unhandledRejection", onUncaught);
    await database?.drop();
  });

  /** A pool of one connection whose sockets (one per connect) are pushed to `sockets` for the test to close. */
  const poolRecordingSockets = (sockets: Socket[]) => {
    const { hostname, port } = new URL(database.url);
    return postgres(
      database.url,
      withSockets({ max: 1, connect_timeout: 3, onnotice: () => {} }, () => {
        const s = new Socket();
        s.connect(Number(port || 5432), hostname);
        sockets.push(s);
        return s;
      }),
    );
  };

  test("a socket closed while a statement is still buffered: that statement fails, the next one runs on a new connection", async () => {
    // The driver's own sockets, so the test can close one at the exact moment that matters: right
    // after a statement was queued for writing (postgres.js flushes small writes on setImmediate)
    // and before that flush runs. A socket's close is emitted before pending immediates run.
    const sockets: Socket[] = [];
    const sql = poolRecordingSockets(sockets);
    try {
      const [first] = await sql<{ pid: number }[]>`SELECT pg_backend_pid() AS pid`;
      const buffered = sql`SELECT 1 AS one`.execute();
      sockets.at(-1)!.destroy();
      const lost = await within(2000, buffered);
      expect(lost.hung).toBeUndefined();
      expect(lost.error?.code).toBe("CONNECTION_CLOSED");

      // The pool's only connection reconnects for the next statement and answers it.
      const next = await within(2000, sql<{ pid: number }[]>`SELECT pg_backend_pid() AS pid`.execute());
      expect(next.error).toBeUndefined();
      expect(next.hung).toBeUndefined();
      expect(next.value![0]!.pid).not.toBe(first!.pid);
      expect(sockets.length).toBe(2);

      // And keeps doing so: the next ten on the same connection.
      for (let i = 0; i < 10; i++) {
        const again = await within(2000, sql<{ i: number }[]>`SELECT ${i}::int AS i`.execute());
        expect(again.value?.[0]?.i).toBe(i);
      }
      expect(uncaught).toEqual([]);
    } finally {
      await sql.end({ timeout: 1 });
    }
  });

  test("a statement sent on a socket that dies with an error (a reset) is failed, never answered by the next connection's start-up", async () => {
    const sockets: Socket[] = [];
    const sql = poolRecordingSockets(sockets);
    try {
      await sql`SELECT 1`;
      // Two statements on the wire, then the socket fails with an error (as on a reset) before
      // either is answered.
      const a = sql`SELECT pg_sleep(0.2), 'a' AS v`.execute();
      const b = sql`SELECT 'b' AS v`.execute();
      await Bun.sleep(50);
      sockets.at(-1)!.destroy(Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET" }));
      const [ra, rb] = await Promise.all([within(2000, a), within(2000, b)]);
      // Both fail: neither ran to completion on the dead connection.
      expect(ra.error).toBeDefined();
      expect(rb.error).toBeDefined();
      // Issued right after the error, before the socket's close event: it lands on the dying
      // connection. It may fail (it never ran); an answer must be its own, never the rows of a
      // statement the next connection runs (its start-up, or the statement after it).
      const racing = within(2000, sql<{ v: string }[]>`SELECT 'racing' AS v`.execute());
      const after = within(2000, sql<{ v: string }[]>`SELECT 'after' AS v`.execute());
      const [r1, r2] = await Promise.all([racing, after]);
      expect(r1.hung).toBeUndefined();
      if (r1.value) expect(r1.value[0]?.v).toBe("racing");
      else expect(r1.error?.code).toBe("CONNECTION_CLOSED");
      expect(r2.hung).toBeUndefined();
      if (r2.value) expect(r2.value[0]?.v).toBe("after");
      else expect(r2.error?.code).toBe("CONNECTION_CLOSED");
      // From the next statement on, the pool has a working connection again.
      const next = await within(2000, sql<{ v: string }[]>`SELECT 'next' AS v`.execute());
      expect(next.value?.[0]?.v).toBe("next");
      expect(next.value?.length).toBe(1);
      expect(uncaught).toEqual([]);
    } finally {
      await sql.end({ timeout: 1 });
    }
  });

  test("a connection that dies while it reads the server's array types (every connect does) fails its statement and leaves no unhandled rejection", async () => {
    const { hostname, port } = new URL(database.url);
    let cut = 0;
    const sql = postgres(
      database.url,
      withSockets({ max: 1, connect_timeout: 3, onnotice: () => {}, backoff: () => 0.02 }, () => {
        const s = new Socket();
        s.connect(Number(port || 5432), hostname);
        // The first connection dies as soon as the driver sends its array-types query.
        if (cut === 0) {
          const write = s.write.bind(s) as (...args: unknown[]) => boolean;
          (s as unknown as { write: (...args: unknown[]) => boolean }).write = (chunk: unknown, ...rest: unknown[]) => {
            const sent = write(chunk, ...rest);
            if (cut === 0 && Buffer.isBuffer(chunk) && chunk.includes("typarray")) {
              cut += 1;
              queueMicrotask(() => s.destroy(Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET" })));
            }
            return sent;
          };
        }
        return s;
      }),
    );
    try {
      const first = await within(2000, sql`SELECT 1 AS one`.execute());
      expect(cut).toBe(1);
      expect(first.hung).toBeUndefined();
      expect(first.error).toBeDefined();
      await Bun.sleep(50); // a rejection nobody handles is reported after the turn it happens in
      expect(uncaught).toEqual([]);
      const next = await within(2000, sql`SELECT 2 AS two`.execute());
      expect(next.value?.[0]).toEqual({ two: 2 });
    } finally {
      await sql.end({ timeout: 1 });
    }
  });

  test("a server that closes every connection during start-up without an error (a proxy with nothing behind it): statements fail, none hangs", async () => {
    // Accepts, then closes: what a TCP proxy or load balancer does when no PostgreSQL is behind it.
    const closer = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { open: (s) => void s.end(), data() {} } });
    const sql = postgres(`postgres://postgres@127.0.0.1:${closer.port}/postgres`, { max: 2, connect_timeout: 3, onnotice: () => {}, backoff: () => 0.02 });
    try {
      const results = await Promise.all([0, 1, 2].map(() => within(2000, sql`SELECT 1`.execute())));
      for (const r of results) {
        expect(r.hung).toBeUndefined();
        expect(r.error?.code).toBe("CONNECTION_CLOSED");
      }
      expect(uncaught).toEqual([]);
    } finally {
      await sql.end({ timeout: 1 });
      closer.stop(true);
    }
  });

  /** A pool of `max` whose connections the test can end from the server side, through `admin`. */
  const pgPool = (max: number) => postgres(database.url, { max, connect_timeout: 3, onnotice: () => {}, backoff: () => 0.02 });

  test("a reserve() waiting when its connection is ended gets the reconnected connection", async () => {
    const sql = pgPool(1);
    const admin = pgPool(1);
    try {
      const pid = (await sql<{ pid: number }[]>`SELECT pg_backend_pid() AS pid`)[0]!.pid;
      // The pool's only connection is busy; reserve() waits in the queue behind it.
      const busy = within(3000, sql`SELECT pg_sleep(1)`.execute());
      await Bun.sleep(50);
      const reserving = within(3000, sql.reserve());
      await Bun.sleep(50);
      await admin`SELECT pg_terminate_backend(${pid})`;
      expect((await busy).error).toBeDefined();
      const reserved = await reserving;
      expect(reserved.hung).toBeUndefined();
      expect(reserved.error).toBeUndefined();
      const conn = reserved.value!;
      const [row] = await conn<{ pid: number }[]>`SELECT pg_backend_pid() AS pid`;
      expect(row!.pid).not.toBe(pid);
      conn.release();
      // Released, the connection serves the pool again.
      expect((await within(2000, sql`SELECT 1 AS one`.execute())).value?.[0]).toEqual({ one: 1 });
      expect(uncaught).toEqual([]);
    } finally {
      await sql.end({ timeout: 1 });
      await admin.end({ timeout: 1 });
    }
  });

  test("a reserve() whose connection fails to start is rejected, and the connection it waited for still serves the pool", async () => {
    const { hostname, port } = new URL(database.url);
    let refuse = false;
    // The next connection after `refuse` is set goes to a closed port: it fails to start.
    const sql = postgres(
      database.url,
      withSockets({ max: 1, connect_timeout: 3, onnotice: () => {}, backoff: () => 0.02 }, () => {
        const s = new Socket();
        if (refuse) {
          refuse = false;
          s.connect(closedPort, "127.0.0.1");
        } else s.connect(Number(port || 5432), hostname);
        return s;
      }),
    );
    const admin = pgPool(1);
    const closedPort = unusedPort();
    try {
      const pid = (await sql<{ pid: number }[]>`SELECT pg_backend_pid() AS pid`)[0]!.pid;
      await admin`SELECT pg_terminate_backend(${pid})`;
      await Bun.sleep(100); // the pool has seen its connection close
      refuse = true;
      const reserving = await within(3000, sql.reserve());
      expect(reserving.hung).toBeUndefined();
      expect(reserving.error).toBeDefined();
      // The failed reservation must not keep a place in the queue: the pool reconnects its closed
      // connection for what is queued, would hand it to that settled reservation and lose it, and
      // this statement would then wait for ever.
      await Bun.sleep(300);
      const next = await within(3000, sql<{ one: number }[]>`SELECT 1 AS one`.execute());
      expect(next.hung).toBeUndefined();
      expect(next.value?.[0]).toEqual({ one: 1 });
      expect(uncaught).toEqual([]);
    } finally {
      await sql.end({ timeout: 1 });
      await admin.end({ timeout: 1 });
    }
  });

  test("a statement on a reserved handle whose connection was ended fails, and never runs on the connection that replaced it", async () => {
    const sql = pgPool(1);
    const admin = pgPool(1);
    try {
      await sql`CREATE TABLE stray (n int NOT NULL)`;
      const conn = await sql.reserve();
      const pid = (await conn<{ pid: number }[]>`SELECT pg_backend_pid() AS pid`)[0]!.pid;
      await admin`SELECT pg_terminate_backend(${pid})`;
      // The dead transaction's next statement fails...
      const dead = await within(2000, conn`SELECT 1`.execute());
      expect(dead.hung).toBeUndefined();
      expect(dead.error).toBeDefined();
      // ...the pool reconnects its only connection for other work...
      expect((await within(2000, sql`SELECT 1 AS one`.execute())).value?.[0]).toEqual({ one: 1 });
      // ...and a late statement of the old handle (a ROLLBACK, an INSERT) is refused, not run there.
      const late = await within(2000, conn`INSERT INTO stray (n) VALUES (1)`.execute());
      expect(late.error?.code).toBe("CONNECTION_CLOSED");
      expect((await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM stray`)[0]!.n).toBe(0);
      expect(uncaught).toEqual([]);
    } finally {
      await sql.end({ timeout: 1 });
      await admin.end({ timeout: 1 });
    }
  });

  test("Keyward's pool under load while the server ends every connection, three times: nothing hangs, and it serves again right after", async () => {
    const handle = openPostgres(database.url, { max: 4 });
    const admin = pgPool(1);
    try {
      await handle.sql`CREATE TABLE IF NOT EXISTS marks (n int NOT NULL)`;
      let stop = false;
      let ok = 0;
      // Four clients, each in turn writing in a transaction (a reserved connection) and reading.
      const clients = [0, 1, 2, 3].map(async (c) => {
        for (let i = 0; !stop; i++) {
          try {
            if (i % 2 === 0) await handle.db.transaction(async (tx) => void (await tx.execute(`INSERT INTO marks (n) VALUES (${c})`)));
            else await handle.sql`SELECT count(*) FROM marks`;
            ok++;
          } catch {
            // A statement on a connection that was ended fails; that is expected here.
          }
        }
      });
      await Bun.sleep(200);
      for (let round = 0; round < 3; round++) {
        await admin`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`;
        await Bun.sleep(300);
      }
      stop = true;
      // Every client's last statement settles: with the unrepaired driver some transactions never do.
      const settled = await within(5000, Promise.all(clients));
      expect(settled.hung).toBeUndefined();
      expect(ok).toBeGreaterThan(20);
      // Within the reconnect delay's cap (2 s, reconnectDelaySeconds) the pool answers a burst of
      // transactions and reads at once, on every connection, without a failure.
      await Bun.sleep(2000);
      const burst = await within(
        1500,
        Promise.all(
          Array.from({ length: 16 }, (_, i) =>
            i % 2 === 0 ? handle.db.transaction(async (tx) => void (await tx.execute(`INSERT INTO marks (n) VALUES (${i})`))) : handle.ping(),
          ),
        ),
      );
      expect(burst.hung).toBeUndefined();
      expect(burst.error).toBeUndefined();
      expect(uncaught).toEqual([]);
    } finally {
      await handle.close();
      await admin.end({ timeout: 1 });
    }
  });
});

describe("reconnectDelaySeconds", () => {
  test("starts near 0.1 s, doubles, and never passes 2 s", () => {
    for (let i = 0; i < 50; i++) {
      expect(reconnectDelaySeconds(1)).toBeGreaterThanOrEqual(0.05);
      expect(reconnectDelaySeconds(1)).toBeLessThanOrEqual(0.1);
      expect(reconnectDelaySeconds(4)).toBeLessThanOrEqual(0.8);
      expect(reconnectDelaySeconds(40)).toBeLessThanOrEqual(2);
      expect(reconnectDelaySeconds(40)).toBeGreaterThanOrEqual(1);
    }
  });
});
