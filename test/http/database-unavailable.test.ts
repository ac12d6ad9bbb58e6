// A database that cannot answer right now is 503 DATABASE_UNAVAILABLE with Retry-After, in the
// spec's envelope, never a 500; and the node serves again as soon as the database does.
// PostgreSQL: the app reaches its database through a TCP relay (test/support/tcp-relay.ts) that the
// test cuts (every open connection dropped, new ones closed at once) and restores. SQLite: another connection holds the
// write lock past busy_timeout (SQLITE_BUSY).
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { Database } from "bun:sqlite";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import postgres from "postgres";
import { createTestApp, testEngine, type TestApp } from "../support/app";
import { catalog, quota } from "../support/license-api";
import { freshPgDatabase, pgTestUrl, type ScratchDatabase } from "../support/pg";
import { eventually } from "../process/support";
import { startRelay, type Relay } from "../support/tcp-relay";
import { databaseSetupHint, isDatabaseUnavailable } from "../../src/db/errors";
import { unusedPort } from "../support/ports";

setDefaultTimeout(40_000);

const expectUnavailable = (res: { status: number; headers: Headers; body: any }) => {
  expect(res.status).toBe(503);
  expect(res.headers.get("retry-after")).toBe("2");
  expect(res.headers.get("x-request-id")).toBeTruthy();
  expect(res.body).toEqual({
    success: false,
    error: { code: "DATABASE_UNAVAILABLE", message: "The database is unavailable; retry shortly.", details: null },
  });
};

describe.skipIf(!pgTestUrl())("PostgreSQL unreachable", () => {
  let database: ScratchDatabase;
  let relay: Relay;
  let t: TestApp;
  let key: string;
  beforeAll(async () => {
    database = await freshPgDatabase("db_unavailable", { migrated: true });
    const url = new URL(database.url);
    relay = await startRelay({ hostname: url.hostname, port: Number(url.port || 5432) });
    url.hostname = "127.0.0.1";
    url.port = String(relay.port);
    t = await createTestApp({ engine: "postgres", env: { DATABASE_URL: url.toString() } });
    ({ key } = await catalog(t));
    expect((await t.request("POST", "/api/v1/license/activate", { body: { license_key: key, identifier: "device-1" } })).status).toBe(200);
  });
  afterAll(async () => {
    relay?.restore();
    await t?.close();
    relay?.stop();
    await database?.drop();
  });

  test("while the database is cut off: 503 DATABASE_UNAVAILABLE with Retry-After on public, write and admin routes; 200 again once it is back", async () => {
    expect((await t.request("POST", "/api/v1/license/verify", { body: { license_key: key, identifier: "device-1" } })).status).toBe(200);
    relay.cut();
    expectUnavailable(await t.request("POST", "/api/v1/license/verify", { body: { license_key: key, identifier: "device-1" } }));
    expectUnavailable(await t.request("POST", "/api/v1/license/activate", { body: { license_key: key, identifier: "device-2" } }));
    expectUnavailable(await t.request("GET", "/api/v1/admin/products"));
    relay.restore();
    await eventually(
      async () => (await t.request("POST", "/api/v1/license/verify", { body: { license_key: key, identifier: "device-1" } })).status === 200,
      "verify answers 200 again",
      5_000,
    );
    expect((await t.request("POST", "/api/v1/license/activate", { body: { license_key: key, identifier: "device-2" } })).status).toBe(200);
  });
});

describe.skipIf(!pgTestUrl())("PostgreSQL gone silent (a network partition: no reset, no close)", () => {
  test("requests answer 503 DATABASE_UNAVAILABLE within DATABASE_STALL_TIMEOUT_MS instead of waiting for the kernel; 200 again once the network is back", async () => {
    const database = await freshPgDatabase("db_silent", { migrated: true });
    const url = new URL(database.url);
    const relay = await startRelay({ hostname: url.hostname, port: Number(url.port || 5432) });
    url.hostname = "127.0.0.1";
    url.port = String(relay.port);
    const t = await createTestApp({
      engine: "postgres",
      env: { DATABASE_URL: url.toString(), DATABASE_LOCK_TIMEOUT_MS: "1000", DATABASE_STALL_TIMEOUT_MS: "1500" },
    });
    try {
      const { key } = await catalog(t);
      const verify = () => t.request("POST", "/api/v1/license/verify", { body: { license_key: key, identifier: "device-1" } });
      expect((await t.request("POST", "/api/v1/license/activate", { body: { license_key: key, identifier: "device-1" } })).status).toBe(200);
      relay.freeze();
      // A statement sent into the silence (its connection is dropped), then one that needs a new
      // connection (its start-up gets the same limit).
      for (const request of [verify, () => t.request("GET", "/api/v1/admin/products")]) {
        const started = performance.now();
        expectUnavailable(await request());
        const waited = performance.now() - started;
        expect(waited).toBeGreaterThanOrEqual(1_400);
        expect(waited).toBeLessThan(10_000);
      }
      relay.restore();
      await eventually(async () => (await verify()).status === 200, "verify answers 200 again", 5_000);
    } finally {
      relay.restore();
      await t.close();
      relay.stop();
      await database.drop();
    }
  });
});

describe.skipIf(!pgTestUrl())("PostgreSQL taking reads only (a standby during a failover)", () => {
  test("with the public limiter off, verify keeps answering 200, writes answer 503 DATABASE_UNAVAILABLE with Retry-After, and both work again once the server takes writes", async () => {
    const database = await freshPgDatabase("read_only", { migrated: true });
    const admin = postgres(pgTestUrl()!, { max: 1, onnotice: () => {} });
    // The public rate limiter off: on PostgreSQL it counts hits with writes (leases), so with it on a
    // read-only server answers every public request 503 too (docs/operations.md). Verify itself reads.
    const t = await createTestApp({ engine: "postgres", env: { DATABASE_URL: database.url, RATE_LIMIT_PUBLIC_PER_MINUTE: "0" } });
    // Existing sessions keep their mode: end the app's connections so its pool reconnects in the new one.
    const setReadOnly = async (on: boolean) => {
      await admin.unsafe(`ALTER DATABASE "${database.name}" ${on ? "SET default_transaction_read_only = on" : "RESET default_transaction_read_only"}`);
      await admin`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = ${database.name} AND pid <> pg_backend_pid()`;
    };
    try {
      const { key } = await catalog(t);
      const verify = () => t.request("POST", "/api/v1/license/verify", { body: { license_key: key, identifier: "device-1" } });
      const activate = (identifier: string) => t.request("POST", "/api/v1/license/activate", { body: { license_key: key, identifier } });
      expect((await activate("device-1")).status).toBe(200);
      await setReadOnly(true);
      await eventually(async () => (await verify()).status === 200, "verify answers 200 on the read-only server", 5_000);
      expectUnavailable(await activate("device-2"));
      expect((await verify()).status).toBe(200);
      await setReadOnly(false);
      await eventually(async () => (await activate("device-2")).status === 200, "activation succeeds once writes are taken again", 5_000);
    } finally {
      await t.close();
      await admin.end({ timeout: 1 });
      await database.drop();
    }
  });
});

// Pinned to SQLite: run in the SQLite pass of npm test only (it waits out busy_timeout twice).
describe.skipIf(testEngine() !== "sqlite")("SQLite write lock held past busy_timeout", () => {
  let t: TestApp;
  let other: Database;
  beforeAll(async () => {
    t = await createTestApp({ engine: "sqlite" });
    other = new Database(t.deps.config.databasePath);
  });
  afterAll(async () => {
    other?.close();
    await t?.close();
  });

  test("a write that cannot get the lock is 503 DATABASE_UNAVAILABLE (activation, and a usage report's batch); the same writes succeed once the lock is released", async () => {
    const { key } = await catalog(t, {}, [quota("api", 100)]);
    const usage = () => t.request("POST", "/api/v1/license/usage", { body: { license_key: key, feature: "api" } });
    other.exec("BEGIN IMMEDIATE");
    try {
      expectUnavailable(await t.request("POST", "/api/v1/license/activate", { body: { license_key: key, identifier: "device-1" } }));
      expectUnavailable(await usage());
    } finally {
      other.exec("ROLLBACK");
    }
    expect((await t.request("POST", "/api/v1/license/activate", { body: { license_key: key, identifier: "device-1" } })).status).toBe(200);
    // Nothing of the refused report was written: the next one is the first.
    const next = await usage();
    expect(next.status).toBe(200);
    expect(next.body.data.used).toBe(1);
  });
});

/** What `fn` throws (it must throw). */
function thrownBy(fn: () => unknown): unknown {
  try {
    fn();
  } catch (e) {
    return e;
  }
  throw new Error("expected an error");
}

describe("isDatabaseUnavailable", () => {
  test("the real errors of a held SQLite lock and of a refused PostgreSQL connection are; a constraint violation is not", async () => {
    const dir = mkdtempSync(join(tmpdir(), "keyward-busy-"));
    const a = new Database(`${dir}/x.db`);
    const b = new Database(`${dir}/x.db`);
    try {
      a.exec("PRAGMA journal_mode = WAL; CREATE TABLE x (n INTEGER PRIMARY KEY)");
      b.exec("PRAGMA busy_timeout = 0");
      a.exec("BEGIN IMMEDIATE");
      const busy = thrownBy(() => b.exec("INSERT INTO x (n) VALUES (1)"));
      a.exec("ROLLBACK");
      expect(isDatabaseUnavailable(busy)).toBe(true);
      // drizzle wraps driver errors: the cause chain is searched.
      expect(isDatabaseUnavailable(Object.assign(new Error("Failed query: INSERT"), { cause: busy }))).toBe(true);
      a.exec("INSERT INTO x (n) VALUES (1)");
      const unique = thrownBy(() => a.exec("INSERT INTO x (n) VALUES (1)"));
      expect(isDatabaseUnavailable(unique)).toBe(false);
    } finally {
      a.close();
      b.close();
      rmSync(dir, { recursive: true, force: true });
    }
    const sql = postgres(`postgres://nobody@127.0.0.1:${unusedPort()}/none`, { max: 1, connect_timeout: 2, onnotice: () => {} });
    let refused: unknown = null;
    try {
      await sql`SELECT 1`;
    } catch (e) {
      refused = e;
    } finally {
      await sql.end({ timeout: 1 });
    }
    expect((refused as { code?: string }).code).toBe("ECONNREFUSED");
    expect(isDatabaseUnavailable(refused)).toBe(true);
    expect(isDatabaseUnavailable(new Error("boom"))).toBe(false);
    expect(isDatabaseUnavailable({ code: "57P01" })).toBe(true);
    expect(isDatabaseUnavailable({ code: "08006" })).toBe(true);
    expect(isDatabaseUnavailable({ code: "23505" })).toBe(false);
  });
});

describe.skipIf(!pgTestUrl())("isDatabaseUnavailable on PostgreSQL's own refusals", () => {
  test("a write on a read-only server (a standby after failover) and a cancelled statement are; a constraint violation is not", async () => {
    const sql = postgres(pgTestUrl()!, { max: 1, onnotice: () => {} });
    const failure = async (work: () => Promise<unknown>) => {
      try {
        await work();
      } catch (e) {
        return e as { code?: string };
      }
      throw new Error("expected a failure");
    };
    try {
      // What a standby answers to a write: the same SQLSTATE as a read-only transaction's.
      const readOnly = await failure(() => sql.begin("read only", (tx) => tx`CREATE TEMP TABLE keyward_probe (n int)`));
      expect(readOnly.code).toBe("25006");
      expect(isDatabaseUnavailable(readOnly)).toBe(true);
      const cancelled = await failure(() => sql.begin((tx) => [tx`SET LOCAL statement_timeout = 50`, tx`SELECT pg_sleep(2)`]));
      expect(cancelled.code).toBe("57014");
      expect(isDatabaseUnavailable(cancelled)).toBe(true);
      const duplicate = await failure(() => sql.begin((tx) => [tx`CREATE TEMP TABLE keyward_dup (n int PRIMARY KEY)`, tx`INSERT INTO keyward_dup VALUES (1), (1)`]));
      expect(duplicate.code).toBe("23505");
      expect(isDatabaseUnavailable(duplicate)).toBe(false);
    } finally {
      await sql.end({ timeout: 1 });
    }
  });
});

describe.skipIf(!pgTestUrl())("databaseSetupHint", () => {
  test("a prepared statement PostgreSQL does not know (what a transaction-mode pooler causes) names the fix; other errors get none", async () => {
    const sql = postgres(pgTestUrl()!, { max: 1, onnotice: () => {} });
    let missing: unknown = null;
    try {
      await sql.unsafe("EXECUTE keyward_no_such_statement");
    } catch (e) {
      missing = e;
    } finally {
      await sql.end({ timeout: 1 });
    }
    expect((missing as { code?: string }).code).toBe("26000");
    expect(databaseSetupHint(missing)).toContain("add prepare=false to DATABASE_URL");
    // drizzle wraps driver errors: the cause chain is searched.
    expect(databaseSetupHint(Object.assign(new Error("Failed query: SELECT"), { cause: missing }))).toContain("prepare=false");
    // Not a transient failure: retrying does not help, so it stays a 500 (logged with the hint).
    expect(isDatabaseUnavailable(missing)).toBe(false);
    expect(databaseSetupHint({ code: "23505", message: "duplicate key" })).toBeNull();
    expect(databaseSetupHint(new Error("boom"))).toBeNull();
  });
});
