// PostgreSQL migration runner (src/db/migrate.pg.ts) against a real server: each test file gets a fresh
// database on TEST_DATABASE_URL's server. Skipped, with one line, when TEST_DATABASE_URL is unset.
import { afterAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { eq } from "drizzle-orm";
import { openPostgres, type PgHandle } from "../../src/db/pg";
import { runPgMigrations } from "../../src/db/migrate.pg";
import { NewerSchemaError } from "../../src/db/migrate";
import { PG_MIGRATIONS } from "../../src/db/migrations-pg.gen";
import * as pgSchema from "../../src/db/schema-pg";
import { freshPgDatabase, pgTestUrl, testDatabaseName } from "../support/pg";

const url = pgTestUrl();
if (!url) console.log("test/db/pg-migrate.test.ts: skipped (set TEST_DATABASE_URL=postgres://… to run)");

const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

async function freshHandle(label: string): Promise<{ handle: PgHandle; url: string }> {
  const db = await freshPgDatabase(label);
  const handle = openPostgres(db.url, { max: 3 });
  cleanups.push(async () => {
    await handle.close();
    await db.drop();
  });
  return { handle, url: db.url };
}

const tablesIn = async (h: PgHandle) =>
  (
    await h.sql<{ table_name: string }[]>`SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name`
  ).map((r) => r.table_name);

test("test database names are unique, sanitized and within PostgreSQL's 63-byte limit", () => {
  const long = testDatabaseName("Copy Test: ÜBER-long label ".repeat(5));
  expect(long).toMatch(/^kwt_[a-z0-9_]+_[0-9a-f]{12}$/);
  expect(long.length).toBeLessThanOrEqual(63);
  expect(testDatabaseName("x")).not.toBe(testDatabaseName("x"));
  expect(testDatabaseName("pg migrate")).toMatch(/^kwt_pg_migrate_[0-9a-f]{12}$/);
});

describe.skipIf(!url)("PostgreSQL migrations", () => {
  test("apply on a fresh database; running again is a no-op", async () => {
    const { handle } = await freshHandle("migrate_fresh");
    const first = await runPgMigrations(handle.sql, 1_700_000_000_123);
    expect(first).toEqual(PG_MIGRATIONS.map((m) => ({ tag: m.tag, appliedNow: true })));
    const tables = await tablesIn(handle);
    expect(tables).toContain("licenses");
    expect(tables).toContain("job_leases");
    expect(tables).toContain("generations");
    expect(tables).toContain("_keyward_migrations");
    const rows = await handle.sql<{ tag: string; applied_at: string }[]>`SELECT tag, applied_at::text FROM _keyward_migrations ORDER BY tag`;
    expect(rows.map((r) => r.tag)).toEqual(PG_MIGRATIONS.map((m) => m.tag));
    expect(new Date(rows[0]!.applied_at).getTime()).toBe(1_700_000_000_123);

    const again = await runPgMigrations(handle.sql, 1_800_000_000_000);
    expect(again).toEqual(PG_MIGRATIONS.map((m) => ({ tag: m.tag, appliedNow: false })));
    expect(await tablesIn(handle)).toEqual(tables);
    const after = await handle.sql<{ tag: string; applied_at: string }[]>`SELECT tag, applied_at::text FROM _keyward_migrations ORDER BY tag`;
    expect(after).toEqual(rows);
  });

  test("a migration changed after it was applied is refused and changes nothing", async () => {
    const { handle } = await freshHandle("migrate_changed");
    await runPgMigrations(handle.sql, 1);
    const changed = PG_MIGRATIONS.map((m, i) => (i === 0 ? { ...m, sql: m.sql + "\n-- edited" } : m));
    await expect(runPgMigrations(handle.sql, 2, changed)).rejects.toThrow(/changed after it was applied/);
    const [count] = await handle.sql<{ n: number }[]>`SELECT count(*) AS n FROM _keyward_migrations`;
    expect(count!.n).toBe(PG_MIGRATIONS.length);
  });

  test("a database a newer version migrated is refused, naming what it does not know, and nothing changes", async () => {
    const { handle } = await freshHandle("migrate_newer");
    await runPgMigrations(handle.sql, 1);
    await handle.sql`INSERT INTO _keyward_migrations (tag, hash, applied_at) VALUES ('9999_from_the_future', 'x', now())`;
    const err = await runPgMigrations(handle.sql, 2).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NewerSchemaError);
    expect((err as Error).message).toContain("migrated by a newer Keyward (migrations this version does not know: 9999_from_the_future)");
    const [count] = await handle.sql<{ n: number }[]>`SELECT count(*) AS n FROM _keyward_migrations`;
    expect(count!.n).toBe(PG_MIGRATIONS.length + 1);
  });

  test("a migration that fails part-way leaves nothing behind (one transaction per migration)", async () => {
    const { handle } = await freshHandle("migrate_atomic");
    const broken = [
      ...PG_MIGRATIONS,
      { tag: "9999_broken", sql: 'CREATE TABLE "half_done" ("id" text);\n--> statement-breakpoint\nSELECT * FROM "no_such_table";' },
    ];
    await expect(runPgMigrations(handle.sql, 1, broken)).rejects.toThrow(/no_such_table/);
    expect(await tablesIn(handle)).not.toContain("half_done");
    const tags = (await handle.sql<{ tag: string }[]>`SELECT tag FROM _keyward_migrations ORDER BY tag`).map((r) => r.tag);
    expect(tags).toEqual(PG_MIGRATIONS.map((m) => m.tag));
  });

  test("three processes migrating one fresh database at once all succeed; each migration applies once", async () => {
    const { handle, url: dbUrl } = await freshHandle("migrate_race");
    const startAt = Date.now() + 1500;
    const procs = [0, 1, 2].map(() =>
      Bun.spawn([process.execPath, join(import.meta.dir, "pg-migrate-worker.ts"), dbUrl, String(startAt)], {
        stdout: "pipe",
        stderr: "pipe",
      }),
    );
    const outcomes = await Promise.all(
      procs.map(async (p) => ({
        code: await p.exited,
        out: await new Response(p.stdout).text(),
        err: await new Response(p.stderr).text(),
      })),
    );
    for (const o of outcomes) expect({ code: o.code, err: o.err }).toEqual({ code: 0, err: "" });
    const results = outcomes.map((o) => JSON.parse(o.out) as { tag: string; appliedNow: boolean }[]);
    for (const m of PG_MIGRATIONS) {
      const appliers = results.filter((r) => r.find((a) => a.tag === m.tag)?.appliedNow === true);
      expect({ tag: m.tag, appliers: appliers.length }).toEqual({ tag: m.tag, appliers: 1 });
      for (const r of results) expect(r.find((a) => a.tag === m.tag)).toBeDefined();
    }
    const rows = await handle.sql<{ tag: string }[]>`SELECT tag FROM _keyward_migrations ORDER BY tag`;
    expect(rows.map((r) => r.tag)).toEqual(PG_MIGRATIONS.map((m) => m.tag));
  }, 60_000);

  test("openPostgres: ping answers; close is idempotent; a closed handle's ping rejects", async () => {
    const db = await freshPgDatabase("pg_handle");
    cleanups.push(() => db.drop());
    const handle = openPostgres(db.url);
    await handle.ping();
    await Promise.all([handle.close(), handle.close()]);
    await handle.close();
    await expect(handle.ping()).rejects.toThrow();
  });

  test("values round-trip through drizzle: jsonb as objects, timestamptz to the millisecond, bigint as numbers", async () => {
    const { handle } = await freshHandle("migrate_types");
    await runPgMigrations(handle.sql, 1);
    const { db } = handle;
    const value = { vendor: "Acme", nested: { days: [7, 30], on: true, none: null } };
    const at = new Date(Date.UTC(2026, 10, 23, 1, 2, 3, 456));
    await db.insert(pgSchema.settings).values({ key: "vendor", value, updatedAt: at });
    const [row] = await db.select().from(pgSchema.settings).where(eq(pgSchema.settings.key, "vendor"));
    expect(row!.value).toEqual(value);
    expect(row!.updatedAt).toBeInstanceOf(Date);
    expect(row!.updatedAt.getTime()).toBe(at.getTime());
    // Stored as a JSON object, not as a JSON string holding the text of one.
    const [kind] = await handle.sql<{ t: string }[]>`SELECT jsonb_typeof(value) AS t FROM settings WHERE key = 'vendor'`;
    expect(kind!.t).toBe("object");

    const big = 2 ** 40 + 7;
    await db.insert(pgSchema.generations).values({ name: "catalog", value: big });
    const [gen] = await db.select().from(pgSchema.generations);
    expect(gen).toEqual({ name: "catalog", value: big });
    const [raw] = await handle.sql<{ value: number }[]>`SELECT value FROM generations`;
    expect(raw!.value).toBe(big);

    await db.insert(pgSchema.jobLeases).values({ name: "lifecycle", lastSlotAt: at, lastResult: { expired: 3 } });
    const [lease] = await db.select().from(pgSchema.jobLeases);
    expect(lease).toEqual({
      name: "lifecycle",
      owner: null,
      leaseUntil: null,
      fence: 0,
      lastSlotAt: at,
      lastStartedAt: null,
      lastFinishedAt: null,
      lastResult: { expired: 3 },
    });
  });
});
