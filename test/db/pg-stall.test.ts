// A connection whose network goes silent (a partition, a host gone in a failover: no RST, no FIN)
// must not hold its statements until the kernel gives up retransmitting (about 15 minutes on Linux).
// The pool's stall watchdog (scripts/patch-deps.mjs, repair 9; src/db/pg.ts stallMs;
// DATABASE_STALL_TIMEOUT_MS) fails the statements of a connection the server has been silent on
// while they wait, and the pool reconnects. The silence is a TCP relay that stops carrying bytes
// without closing anything (test/support/tcp-relay.ts, freeze()).
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { openPostgres, type PgHandle } from "../../src/db/pg";
import { isDatabaseUnavailable } from "../../src/db/errors";
import { freshPgDatabase, pgTestUrl, type ScratchDatabase } from "../support/pg";
import { startRelay, type Relay } from "../support/tcp-relay";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** How a statement settled, and after how long. */
async function outcome(work: Promise<unknown>, giveUpMs: number): Promise<{ ms: number; code?: string; ok?: true; error?: unknown; hung?: true }> {
  const started = performance.now();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const hang = new Promise<{ hung: true }>((resolve) => (timer = setTimeout(() => resolve({ hung: true }), giveUpMs)));
  try {
    const settled = await Promise.race([
      work.then(
        () => ({ ok: true as const }),
        (error: unknown) => ({ error, code: (error as { code?: string }).code }),
      ),
      hang,
    ]);
    return { ...settled, ms: performance.now() - started };
  } finally {
    clearTimeout(timer);
  }
}

describe.skipIf(!pgTestUrl())("PostgreSQL stall watchdog", () => {
  let database: ScratchDatabase;
  let relay: Relay;
  let relayedUrl: string;
  const pools: PgHandle[] = [];
  const pool = (stallMs?: number) => {
    const handle = openPostgres(relayedUrl, { max: 1, ...(stallMs ? { stallMs } : {}) });
    pools.push(handle);
    return handle;
  };
  beforeAll(async () => {
    database = await freshPgDatabase("pg_stall");
    const url = new URL(database.url);
    relay = await startRelay({ hostname: url.hostname, port: Number(url.port || 5432) });
    url.hostname = "127.0.0.1";
    url.port = String(relay.port);
    relayedUrl = url.toString();
  });
  // A failed expectation must not leave the next test behind a frozen relay.
  afterEach(() => relay.restore());
  afterAll(async () => {
    relay?.restore();
    for (const p of pools) await p.close();
    relay?.stop();
    await database?.drop();
  });

  test("statements sent into the silence fail with CONNECTION_STALLED after the limit (a 503), and the pool serves again once the network is back", async () => {
    const pg = pool(1_000);
    await pg.sql`SELECT 1`;
    relay.freeze();
    // Three statements on the pool's one connection: the first in flight, two pipelined or queued.
    const settled = await Promise.all([1, 2, 3].map((n) => outcome(pg.sql`SELECT ${n}::int AS n`, 8_000)));
    relay.restore();
    // The statement in flight is failed by the watchdog; one still queued in the pool may instead
    // meet the reconnect, whose start-up has the same limit (CONNECT_TIMEOUT).
    expect(settled[0]!.code).toBe("CONNECTION_STALLED");
    for (const s of settled) {
      expect(["CONNECTION_STALLED", "CONNECT_TIMEOUT"]).toContain(s.code!);
      expect(isDatabaseUnavailable(s.error)).toBe(true);
      expect(s.ms).toBeGreaterThanOrEqual(950);
      expect(s.ms).toBeLessThan(5_000);
    }
    const [row] = await pg.sql<{ n: number }[]>`SELECT 4::int AS n`;
    expect(row!.n).toBe(4);
  });

  test("an idle connection across a silence longer than the limit is left alone (nothing was waiting)", async () => {
    const pg = pool(1_000);
    await pg.sql`SELECT 1`;
    const connections = relay.relayed;
    relay.freeze();
    // Past the limit and a few of the watchdog's checks (every quarter of the limit).
    await sleep(1_600);
    relay.restore();
    await pg.sql`SELECT 1`;
    expect(relay.relayed).toBe(connections);
  });

  test("a statement the server answers within the limit completes; one it stays silent on longer is ended too", async () => {
    const pg = pool(1_000);
    expect((await outcome(pg.sql`SELECT pg_sleep(0.5)`, 8_000)).ok).toBe(true);
    const slow = await outcome(pg.sql`SELECT pg_sleep(2)`, 8_000);
    expect(slow.code).toBe("CONNECTION_STALLED");
    // Its connection is closed and opened again: a statement sent while it closes fails with it (as
    // on any failed connection), one sent after runs on the new connection.
    await sleep(50);
    await pg.sql`SELECT 1`;
  });

  test("without a limit (the driver's default) a statement sent into the silence is still waiting seconds later", async () => {
    const pg = pool();
    await pg.sql`SELECT 1`;
    relay.freeze();
    const pending = pg.sql`SELECT 1`;
    const early = await outcome(pending, 1_600);
    expect(early.hung).toBe(true);
    relay.restore();
    expect((await outcome(pending, 5_000)).ok).toBe(true);
  });
});
