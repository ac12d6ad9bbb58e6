// `keyward db copy --to postgres://…` (src/db/copy.ts): a SQLite database filled through the real
// HTTP API is copied into a fresh PostgreSQL database and every table is compared row by row.
// Skipped, with one line, when TEST_DATABASE_URL is unset.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { is } from "drizzle-orm";
import { drizzle } from "drizzle-orm/bun-sqlite";
import { SQLiteTable, getTableConfig as sqliteTableConfig } from "drizzle-orm/sqlite-core";
import { PgTable, getTableConfig as pgTableConfig } from "drizzle-orm/pg-core";
import * as liteSchema from "../../src/db/schema";
import * as pgSchema from "../../src/db/schema-pg";
import { openDatabase } from "../../src/db/client";
import { runMigrations } from "../../src/db/migrate";
import { openPostgres, type PgHandle } from "../../src/db/pg";
import { CopyFailedError, CopyRefusedError, copySqliteToPostgres, type CopyReport } from "../../src/db/copy";
import { revealLicenseKey } from "../../src/modules/licenses/service";
import { createTestApp, type TestApp } from "../support/app";
import { freshPgDatabase, pgTestUrl } from "../support/pg";
import { addUploadedArtifact, createDraft } from "../http/releases/support";
import { childEnv, MAIN } from "../process/support";

const url = pgTestUrl();
if (!url) console.log("test/db/copy.test.ts: skipped (set TEST_DATABASE_URL=postgres://… to run)");

const V1 = "/api/v1";
const liteTables = (Object.values(liteSchema) as unknown[]).filter((v): v is SQLiteTable => is(v, SQLiteTable));
const pgByName = new Map(
  (Object.values(pgSchema) as unknown[]).filter((v): v is PgTable => is(v, PgTable)).map((t) => [pgTableConfig(t).name, t]),
);

/** Dates as ISO strings and object keys sorted (jsonb does not keep key order), for comparison. */
function canonical(v: unknown): unknown {
  if (v instanceof Date) return v.toISOString();
  if (Array.isArray(v)) return v.map(canonical);
  if (v && typeof v === "object") {
    return Object.fromEntries(Object.keys(v).sort().map((k) => [k, canonical((v as Record<string, unknown>)[k])]));
  }
  return v;
}
const sortedRows = (rows: unknown[]) => rows.map(canonical).sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));

async function ok(res: Promise<{ status: number; body: any; text: string }>, status = 200) {
  const r = await res;
  expect({ status: r.status, body: r.status === status ? "ok" : r.text }).toEqual({ status, body: "ok" });
  return r.body.data;
}

/** A deployment's worth of data, written through the HTTP API like an operator and clients would. */
async function fill(t: TestApp) {
  const product = await ok(t.request("POST", `${V1}/admin/products`, { body: { name: "Copy Me", slug: "copy-me" } }), 201);
  const plan = await ok(
    t.request("POST", `${V1}/admin/plans`, {
      body: {
        product_id: product.id,
        name: "Pro",
        license_type: "subscription",
        max_activations: 3,
        floating: true,
        features: [
          { name: "api", value_type: "quota", quota_limit: 3_000_000_000, quota_period: "monthly" },
          { name: "export.pdf", value_type: "bool", value: "true" },
        ],
      },
    }),
    201,
  );
  const addon = await ok(
    t.request("POST", `${V1}/admin/addons`, { body: { product_id: product.id, name: "More sync", feature_name: "sync", value_type: "quota", quota_limit: 50 } }),
    201,
  );
  const license = await ok(t.request("POST", `${V1}/admin/licenses`, { body: { product_id: product.id, plan_id: plan.id, email: "owner@example.com" } }), 201);
  await ok(t.request("POST", `${V1}/admin/licenses/${license.id}/addons`, { body: { addon_id: addon.id } }));
  const pub = (path: string, body: unknown, headers: Record<string, string> = {}) => t.request("POST", `${V1}${path}`, { body, headers, key: null });
  await ok(pub("/license/activate", { license_key: license.license_key, identifier: "device-1", label: "Laptop" }, { "idempotency-key": "activate-1" }));
  await ok(pub("/license/usage", { license_key: license.license_key, feature: "api", quantity: 3, metadata: { job: "build-7", tags: ["a", "b"], nested: { z: 1, a: 2 } } }));
  await ok(pub("/license/floating/checkout", { license_key: license.license_key, identifier: "ws-1", label: "Workstation" }));
  await ok(t.request("PATCH", `${V1}/admin/settings`, { body: { vendor_name: "Acme Software", expiry_reminder_days: [1, 7, 14] } }));
  const draft = await createDraft(t, product.id, { version: "1.2.3", notes: "First" });
  await addUploadedArtifact(t, draft.id, "darwin-arm64", "the bytes of 1.2.3\n");
  await ok(t.request("POST", `${V1}/admin/releases/${draft.id}/publish`));
  return { product, plan, license };
}

let t: TestApp;
let sqlitePath: string;
let fixture: Awaited<ReturnType<typeof fill>>;
const cleanups: (() => Promise<void> | void)[] = [];

beforeAll(async () => {
  if (!url) return;
  t = await createTestApp();
  cleanups.push(() => t.close());
  fixture = await fill(t);
  // The copy reads a frozen file, as in a maintenance window: the running test app keeps writing in
  // the background (the rate limiter flushes its counters on a timer), which would make the counts
  // of two copies differ. VACUUM INTO takes a consistent copy, WAL included.
  const frozenDir = mkdtempSync(join(tmpdir(), "keyward-copy-src-"));
  cleanups.push(() => rmSync(frozenDir, { recursive: true, force: true }));
  sqlitePath = join(frozenDir, "keyward.db");
  const live = new Database(join(t.dataDir, "keyward.db"));
  live.run("VACUUM INTO ?", [sqlitePath]);
  live.close();
  // Tables the app does not write yet: filled directly so their types are copied too.
  const lite = drizzle({ client: new Database(sqlitePath), schema: liteSchema });
  lite.insert(liteSchema.generations).values({ name: "copy_test", value: 2 ** 40 + 1 }).run();
  lite
    .insert(liteSchema.jobLeases)
    .values({ name: "copy_test_pass", owner: "node-a", leaseUntil: new Date(1_763_900_000_123), fence: 7, lastSlotAt: new Date(1_763_899_999_000), lastResult: { expired: 2 } })
    .run();
  lite.$client.close();
}, 60_000);

afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

async function target(label: string): Promise<{ url: string; handle: PgHandle }> {
  const db = await freshPgDatabase(label);
  const handle = openPostgres(db.url, { max: 2 });
  cleanups.push(async () => {
    await handle.close();
    await db.drop();
  });
  return { url: db.url, handle };
}

async function pgCounts(h: PgHandle): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const name of pgByName.keys()) {
    const [r] = await h.sql.unsafe(`SELECT count(*) AS n FROM "${name}"`);
    out[name] = Number(r!.n);
  }
  return out;
}

describe.skipIf(!url)("keyward db copy", () => {
  let report: CopyReport;
  let copied: { url: string; handle: PgHandle };

  test("copies every table; each row reads back the same from either engine", async () => {
    copied = await target("copy_main");
    const logged: string[] = [];
    const logger = { debug() {}, info: (m: string, f?: Record<string, unknown>) => logged.push(`${m} ${JSON.stringify(f)}`), warn() {}, error() {}, enabled: () => true };
    // Batches of 2 rows: tables with more rows go through several keyset pages and transactions.
    report = await copySqliteToPostgres({ sqlitePath, targetUrl: copied.url, batchSize: 2, logger });

    // Every schema table is in the report, parents before children.
    const names = report.tables.map((r) => r.name);
    expect([...names].sort()).toEqual(liteTables.map((lt) => sqliteTableConfig(lt).name).sort());
    for (const [child, parent] of [["plans", "products"], ["licenses", "plans"], ["activations", "licenses"], ["artifacts", "releases"], ["license_addons", "addons"]] as const) {
      expect(names.indexOf(child)).toBeGreaterThan(names.indexOf(parent));
    }
    const rows = Object.fromEntries(report.tables.map((r) => [r.name, r.rows]));
    for (const name of ["products", "plans", "plan_features", "addons", "licenses", "license_addons", "activations", "usage_counters", "usage_events", "floating_sessions", "releases", "artifacts", "signing_keys", "api_keys", "audit_log", "settings", "idempotency_keys", "job_leases", "generations"]) {
      expect({ name, copied: (rows[name] ?? 0) > 0 }).toEqual({ name, copied: true });
    }
    expect(rows.audit_log).toBeGreaterThan(2);
    expect(logged.some((l) => l.startsWith("db copy: table copied") && l.includes('"table":"licenses"'))).toBe(true);

    // Row by row, through each engine's drizzle schema (Dates, booleans, JSON objects).
    const lite = drizzle({ client: new Database(sqlitePath, { readonly: true }), schema: liteSchema });
    try {
      for (const table of liteTables) {
        const name = sqliteTableConfig(table).name;
        const fromLite = lite.select().from(table).all();
        const fromPg = await copied.handle.db.select().from(pgByName.get(name)!);
        expect({ name, rows: sortedRows(fromPg) }).toEqual({ name, rows: sortedRows(fromLite) });
        expect({ name, n: fromPg.length }).toEqual({ name, n: rows[name]! });
      }
    } finally {
      lite.$client.close();
    }

    // Types on the PostgreSQL side are the native ones, not copies of SQLite's storage.
    const [plan] = await copied.handle.sql`SELECT floating, pg_typeof(floating)::text AS t FROM plans`;
    expect(plan).toEqual({ floating: true, t: "boolean" });
    const [ev] = await copied.handle.sql`SELECT jsonb_typeof(metadata) AS t, metadata->'nested'->>'a' AS a FROM usage_events`;
    expect(ev).toEqual({ t: "object", a: "2" });
    const [feature] = await copied.handle.sql`SELECT quota_limit FROM plan_features WHERE name = 'api'`;
    expect(feature!.quota_limit).toBe(3_000_000_000);

    // Sealed secrets are byte for byte the same, and the same master key opens them.
    const [pgLicense] = await copied.handle.db.select().from(pgSchema.licenses);
    expect(await revealLicenseKey(t.deps, pgLicense!)).toBe(fixture.license.license_key);
  }, 60_000);

  test("a server on the copy serves every license: verify works, and tokens issued before the copy still verify", async () => {
    // Before: a token from the SQLite instance and its public key.
    const pub = (app: TestApp, path: string, body: unknown) => app.request("POST", `${V1}${path}`, { body, key: null });
    const before = await ok(pub(t, "/license/verify", { license_key: fixture.license.license_key, identifier: "device-1" }));
    const pemBefore = (await ok(t.request("GET", `${V1}/license/pubkey`, { key: null }))).pem as string;

    // After: a node on the PostgreSQL copy with the same master key.
    const node = await createTestApp({ env: { DATABASE_URL: copied.url, RELEASE_KEY_ENCRYPTION_KEY: t.deps.config.masterKeyHex! } });
    cleanups.push(() => node.close());
    expect(node.engine).toBe("postgres");
    const after = await ok(pub(node, "/license/verify", { license_key: fixture.license.license_key, identifier: "device-1" }));
    expect({ ...after, token: null }).toEqual({ ...before, token: null });
    const pubkey = await ok(node.request("GET", `${V1}/license/pubkey`, { key: null }));
    expect(pubkey.pem).toBe(pemBefore);
    // The old token's signature checks out against the key the PostgreSQL node serves, and the new
    // token is signed with the same key id.
    const { createPublicKey, verify } = await import("node:crypto");
    const [payload, signature] = (before.token as string).split(".") as [string, string];
    expect(verify(null, Buffer.from(payload), createPublicKey(pubkey.pem), Buffer.from(signature, "base64url"))).toBe(true);
    const claims = (tok: string) => JSON.parse(Buffer.from(tok.split(".")[0]!, "base64url").toString("utf8"));
    expect(claims(after.token).kid).toBe(claims(before.token).kid);
    // The copy is a working instance: the idempotent activation replays, usage continues from 3.
    const replay = await node.request("POST", `${V1}/license/activate`, {
      body: { license_key: fixture.license.license_key, identifier: "device-1", label: "Laptop" },
      headers: { "idempotency-key": "activate-1" },
      key: null,
    });
    expect(replay.status).toBe(200);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    const usage = await ok(pub(node, "/license/usage", { license_key: fixture.license.license_key, feature: "api", quantity: 2 }));
    expect(usage.used).toBe(5);
  }, 60_000);

  test("refuses a target that already holds rows, and changes nothing in it", async () => {
    const before = await pgCounts(copied.handle);
    const err = await copySqliteToPostgres({ sqlitePath, targetUrl: copied.url }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CopyRefusedError);
    expect((err as Error).message).toMatch(/target database is not empty \(rows in [a-z_, ]*products/);
    expect(await pgCounts(copied.handle)).toEqual(before);
  });

  test("refuses a source with a table the schema does not know; the target stays untouched", async () => {
    const dir = mkdtempSync(join(tmpdir(), "keyward-copy-"));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const path = join(dir, "keyward.db");
    const h = openDatabase(path);
    runMigrations(h.sqlite, 1);
    h.sqlite.exec("CREATE TABLE notes_from_a_plugin (id TEXT PRIMARY KEY, body TEXT)");
    h.sqlite.exec("INSERT INTO notes_from_a_plugin VALUES ('n1', 'would be lost')");
    h.close();
    const dest = await target("copy_unknown");
    const err = await copySqliteToPostgres({ sqlitePath: path, targetUrl: dest.url }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CopyRefusedError);
    expect((err as Error).message).toContain("notes_from_a_plugin");
    const tables = await dest.handle.sql`SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'`;
    expect([...tables]).toEqual([]);
  });

  /**
   * A migrated SQLite source planted by `seed` (which returns what the test needs to know of it, e.g.
   * rowids), copied to a fresh target: the copy's error, and whether the target got any table.
   */
  async function copyOf<T>(label: string, seed: (sqlite: Database) => T): Promise<{ seeded: T; error: Error; targetTables: unknown[] }> {
    const dir = mkdtempSync(join(tmpdir(), "keyward-copy-"));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const path = join(dir, "keyward.db");
    const h = openDatabase(path);
    runMigrations(h.sqlite, 1);
    const seeded = seed(h.sqlite);
    h.close();
    const dest = await target(label);
    const error = (await copySqliteToPostgres({ sqlitePath: path, targetUrl: dest.url }).catch((e: unknown) => e)) as Error;
    const targetTables = [...(await dest.handle.sql`SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'`)];
    return { seeded, error, targetTables };
  }
  const rowidOf = (sqlite: Database, table: string, where: string) => (sqlite.query(`SELECT rowid AS r FROM ${table} WHERE ${where}`).get() as { r: number }).r;

  test("refuses a source holding U+0000, which PostgreSQL cannot store, naming where; the target stays untouched", async () => {
    const { seeded, error, targetTables } = await copyOf("copy_nul", (sqlite) => {
      // As an earlier version could store them: U+0000 in a text column and in a JSON value.
      sqlite.query("INSERT INTO products (id, name, slug, created_at, updated_at) VALUES ('p1', ?, 'nul', 1, 1)").run("Pro\u0000duct");
      const setting = sqlite.query("INSERT INTO settings (key, value, updated_at) VALUES (?, ?, 1)");
      setting.run("with_nul", JSON.stringify({ note: "a\u0000b" }));
      setting.run("escaped_backslash", JSON.stringify({ note: "\\u0000 is text" }));
      return { p: rowidOf(sqlite, "products", "id = 'p1'"), s: rowidOf(sqlite, "settings", "key = 'with_nul'") };
    });
    expect(error).toBeInstanceOf(CopyRefusedError);
    expect(error.message).toContain(`products.name (rowid ${seeded.p})`);
    expect(error.message).toContain(`settings.value (rowid ${seeded.s})`);
    expect(error.message).not.toContain("escaped_backslash");
    expect(error.message).not.toContain("Pro");
    expect(error.message.match(/rowid/g)).toHaveLength(2);
    expect(targetTables).toEqual([]);
  });

  test("refuses a source holding timestamps outside years 1-9999, which PostgreSQL cannot store as written, naming where", async () => {
    const { seeded, error, targetTables } = await copyOf("copy_instants", (sqlite) => {
      // As an earlier version could store them (valid_until "0000-01-01T00:00:00Z" or
      // "9999-12-31T23:59:59-14:00" was accepted): one millisecond past each end, and both ends themselves.
      const product = sqlite.query("INSERT INTO products (id, name, slug, created_at, updated_at) VALUES (?, ?, ?, ?, ?)");
      product.run("p-early", "Early", "early", Date.parse("0001-01-01T00:00:00.000Z") - 1, 1);
      product.run("p-late", "Late", "late", 1, Date.parse("9999-12-31T23:59:59.999Z") + 1);
      product.run("p-ends", "Ends", "ends", Date.parse("0001-01-01T00:00:00.000Z"), Date.parse("9999-12-31T23:59:59.999Z"));
      return { early: rowidOf(sqlite, "products", "id = 'p-early'"), late: rowidOf(sqlite, "products", "id = 'p-late'") };
    });
    expect(error).toBeInstanceOf(CopyRefusedError);
    expect(error.message).toContain("outside 0001-01-01 to 9999-12-31");
    expect(error.message).toContain(`products.created_at (rowid ${seeded.early})`);
    expect(error.message).toContain(`products.updated_at (rowid ${seeded.late})`);
    expect(error.message.match(/rowid/g)).toHaveLength(2);
    expect(error.message).not.toContain("U+0000");
    expect(targetTables).toEqual([]);
  });

  test("refuses a source holding identifiers longer than PostgreSQL's index on them may hold, naming where", async () => {
    const { seeded, error, targetTables } = await copyOf("copy_identifiers", (sqlite) => {
      // As a SQLite deployment with IDENTIFIER_MAX_LENGTH=4096 could store them (the rows' license need
      // not exist for the refusal, which comes before anything is copied).
      sqlite.exec("PRAGMA foreign_keys = OFF");
      const activation = sqlite.query("INSERT INTO activations (id, license_id, identifier, created_at) VALUES (?, 'l1', ?, 1)");
      activation.run("a-long", "x".repeat(2049));
      activation.run("a-edge", "y".repeat(2048));
      return rowidOf(sqlite, "activations", "id = 'a-long'");
    });
    expect(error).toBeInstanceOf(CopyRefusedError);
    expect(error.message).toContain("longer than 2048 bytes");
    expect(error.message).toContain(`activations.identifier (rowid ${seeded})`);
    expect(error.message.match(/rowid/g)).toHaveLength(1);
    expect(error.message).not.toContain("xxxx");
    expect(targetTables).toEqual([]);
  });

  test("a value PostgreSQL refuses part-way fails the copy with the server's reason, never the batch's values", async () => {
    const { error } = await copyOf("copy_fails", (sqlite) => {
      // SQLite stores any integer in an INTEGER column; PostgreSQL's integer ends at 2^31 - 1.
      sqlite.query("INSERT INTO brute_force_state (ip, fails, window_started_at, level, updated_at) VALUES ('203.0.113.77', ?, 1, 0, 1)").run(2 ** 40);
    });
    expect(error).toBeInstanceOf(CopyFailedError);
    expect(error.message).toContain("copying brute_force_state failed");
    expect(error.message).toContain("out of range");
    expect(error.message).toContain("(22003)");
    // drizzle's own message lists every parameter of the failed batch; the server's reason names the
    // one value it refused.
    expect(error.message).not.toContain("203.0.113.77");
  });

  test("refuses a source that is not at the current schema", async () => {
    const dir = mkdtempSync(join(tmpdir(), "keyward-copy-"));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const path = join(dir, "keyward.db");
    new Database(path, { create: true }).close();
    const dest = await target("copy_old");
    const err = await copySqliteToPostgres({ sqlitePath: path, targetUrl: dest.url }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CopyRefusedError);
    expect((err as Error).message).toContain("run `keyward migrate`");
  });

  test("the CLI: `keyward db copy --to URL` copies the configured database, a second run is refused (exit 1)", async () => {
    const dest = await target("copy_cli");
    const env = childEnv({ DATA_DIR: dirname(sqlitePath), RELEASE_KEY_ENCRYPTION_KEY: t.deps.config.masterKeyHex ?? "", LOG_LEVEL: "silent" });
    const run = (args: string[]) => {
      const r = Bun.spawnSync([process.execPath, MAIN, ...args], { env, cwd: dirname(sqlitePath), stdout: "pipe", stderr: "pipe", timeout: 60_000 });
      return { code: r.exitCode, stdout: r.stdout.toString(), stderr: r.stderr.toString() };
    };
    const first = run(["db", "copy", "--to", dest.url]);
    expect({ code: first.code, stderr: first.code === 0 ? "" : first.stderr }).toEqual({ code: 0, stderr: "" });
    const lines = first.stdout.trim().split("\n");
    expect(lines).toEqual(report.tables.map((r) => `${r.name}\t${r.rows}`));
    expect(first.stderr).toContain("row counts verified");
    expect(await pgCounts(dest.handle)).toEqual(Object.fromEntries(report.tables.map((r) => [r.name, r.rows])));

    const second = run(["db", "copy", "--to", dest.url]);
    expect(second.code).toBe(1);
    expect(second.stdout).toBe("");
    expect(second.stderr).toContain("db copy refused: the target database is not empty");

    const usage = run(["db", "copy"]);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain("usage: keyward db copy --to");

    // A malformed host list is refused before any connection, without echoing the password.
    const malformed = run(["db", "copy", "--to", "postgres://u:s3cret@127.0.0.1:5432,/x"]);
    expect(malformed.code).toBe(2);
    expect(malformed.stderr).toContain("--to has a host list that is not host[:port]");
    expect(malformed.stderr).not.toContain("s3cret");
  }, 60_000);
});
