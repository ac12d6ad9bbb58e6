// CLI subcommands through the real entry point: --help, migrate, api-key create, a database that
// cannot be opened.
import { afterAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import postgres from "postgres";
import { freshPgDatabase, pgTestUrl } from "../support/pg";
import { removeTempDirs, runKeyward, startKeyward, tempDir } from "./support";
import { MIGRATIONS } from "../../src/db/migrations.gen";

afterAll(removeTempDirs);

describe("keyward --help", () => {
  for (const flag of ["--help", "-h", "help"]) {
    test(`${flag} lists every command and exits 0 without touching the disk`, () => {
      const cwd = tempDir();
      const r = runKeyward([flag], { cwd });
      expect(r.exitCode).toBe(0);
      for (const cmd of ["serve", "migrate", "backup FILE", "api-key create --scopes"]) expect(r.stdout).toContain(cmd);
      expect(existsSync(join(cwd, "data"))).toBe(false);
    });
  }

  test("an unknown command exits 2 with the help on stderr", () => {
    const r = runKeyward(["frobnicate"]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain("unknown command: frobnicate");
    expect(r.stderr).toContain("Usage: keyward");
  });
});

describe("keyward migrate", () => {
  test("applies every embedded migration once; a second run reports them up to date", () => {
    const dataDir = tempDir();
    const first = runKeyward(["migrate"], { env: { DATA_DIR: dataDir } });
    expect(first.exitCode).toBe(0);
    expect(MIGRATIONS.length).toBeGreaterThan(0);
    for (const m of MIGRATIONS) expect(first.stdout).toContain(`applied  ${m.tag}`);

    const second = runKeyward(["migrate"], { env: { DATA_DIR: dataDir } });
    expect(second.exitCode).toBe(0);
    for (const m of MIGRATIONS) expect(second.stdout).toContain(`up to date  ${m.tag}`);

    const db = new Database(join(dataDir, "keyward.db"), { readonly: true });
    try {
      const tags = db.query("SELECT tag FROM _keyward_migrations ORDER BY tag").all() as { tag: string }[];
      expect(tags.map((t) => t.tag)).toEqual(MIGRATIONS.map((m) => m.tag).sort());
      expect(db.query("SELECT name FROM sqlite_master WHERE type='table' AND name='products'").get()).toBeTruthy();
    } finally {
      db.close();
    }
  });
});

describe("a database the command cannot open", () => {
  test("migrate on an SQLite path that cannot be a database file: one line on stderr, exit 1, no stack trace", () => {
    const dataDir = join(tempDir(), "data");
    // The database file's place is taken by a directory.
    mkdirSync(join(dataDir, "keyward.db"), { recursive: true });
    const r = runKeyward(["migrate"], { env: { DATA_DIR: dataDir } });
    expect(r.exitCode).toBe(1);
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(r.stderr).toStartWith(`cannot open the database (file ${join(dataDir, "keyward.db")}): `);
    expect(r.stderr).not.toContain("    at ");
  });

  test.skipIf(!pgTestUrl())("migrate and api-key create against a PostgreSQL database that does not exist: one line naming host and database, never the password", () => {
    const url = new URL(pgTestUrl()!);
    url.password = "not-a-real-password-42";
    url.pathname = "/keyward_no_such_database";
    for (const args of [["migrate"], ["api-key", "create", "--scopes", "admin"]]) {
      const r = runKeyward(args, { env: { DATA_DIR: join(tempDir(), "data"), DATABASE_URL: url.toString() } });
      expect(r.exitCode).toBe(1);
      expect(r.stdout).toBe("");
      expect(r.stderr.trim()).toBe(`cannot open the database (host ${url.host}, database keyward_no_such_database): database "keyward_no_such_database" does not exist (3D000)`);
    }
  });
});

describe("a database a newer Keyward migrated", () => {
  test("migrate and serve on SQLite: one line naming the migrations this version does not know, exit 1", () => {
    const dataDir = join(tempDir(), "data");
    expect(runKeyward(["migrate"], { env: { DATA_DIR: dataDir } }).exitCode).toBe(0);
    const db = new Database(join(dataDir, "keyward.db"));
    db.query("INSERT INTO _keyward_migrations (tag, hash, applied_at) VALUES ('9999_from_the_future', 'x', 1)").run();
    db.close();
    const migrate = runKeyward(["migrate"], { env: { DATA_DIR: dataDir } });
    expect(migrate.exitCode).toBe(1);
    expect(migrate.stderr.trim().split("\n")).toHaveLength(1);
    expect(migrate.stderr).toContain("the database was migrated by a newer Keyward (migrations this version does not know: 9999_from_the_future)");
    const serve = runKeyward(["serve"], { env: { DATA_DIR: dataDir, PORT: "0" } });
    expect(serve.exitCode).toBe(1);
    expect(serve.stdout + serve.stderr).toContain("migrations this version does not know: 9999_from_the_future");
  });
});

describe("a PostgreSQL database Keyward cannot run on", () => {
  test.skipIf(!pgTestUrl())("migrate and serve on a database whose DateStyle is not ISO: one line saying what to set, exit 1, nothing created", async () => {
    const database = await freshPgDatabase("cli_datestyle");
    try {
      const admin = postgres(database.url, { max: 1, onnotice: () => {} });
      await admin.unsafe(`ALTER DATABASE "${database.name}" SET DateStyle = 'SQL, DMY'`);
      await admin.end();
      const env = { DATA_DIR: join(tempDir(), "data"), DATABASE_URL: database.url };
      const migrate = runKeyward(["migrate"], { env });
      expect(migrate.exitCode).toBe(1);
      expect(migrate.stderr.trim().split("\n")).toHaveLength(1);
      expect(migrate.stderr).toContain(`cannot use the database (host ${new URL(database.url).host}, database ${database.name}): PostgreSQL's DateStyle is "SQL, DMY"`);
      expect(migrate.stderr).not.toContain("    at ");
      const serve = runKeyward(["serve"], { env: { ...env, PORT: "0" } });
      expect(serve.exitCode).toBe(1);
      const logged = (serve.stdout + serve.stderr)
        .split("\n")
        .filter((l) => l.startsWith("{"))
        .map((l) => JSON.parse(l) as { level: string; msg: string; error?: string });
      expect(logged.find((l) => l.level === "error")).toMatchObject({ msg: "cannot open the database", error: expect.stringContaining(`PostgreSQL's DateStyle is "SQL, DMY"`) });
      const probe = postgres(database.url, { max: 1, onnotice: () => {} });
      const tables = await probe`SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'`;
      await probe.end();
      expect([...tables]).toEqual([]);
    } finally {
      await database.drop();
    }
  });
});

describe("keyward api-key create", () => {
  test("prints only the key on stdout; the key works as Bearer on /api/v1/admin/products", async () => {
    const dataDir = tempDir();
    const created = runKeyward(["api-key", "create", "--scopes", "admin", "--name", "bootstrap"], { env: { DATA_DIR: dataDir } });
    expect(created.exitCode).toBe(0);
    // stdout is exactly the key (scripts capture it with $(…)); the notice and logs are on stderr.
    expect(created.stdout).toMatch(/^kw_[0-9A-Za-z]{40}\n$/);
    expect(created.stderr).toContain("It is shown only once");
    const key = created.stdout.trim();

    const running = await startKeyward({ env: { DATA_DIR: dataDir } });
    try {
      const ok = await fetch(`${running.url}/api/v1/admin/products`, { headers: { authorization: `Bearer ${key}` } });
      expect(ok.status).toBe(200);
      expect(((await ok.json()) as { data: { items: unknown[] } }).data.items).toEqual([]);

      const create = await fetch(`${running.url}/api/v1/admin/products`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({ name: "Editor", slug: "editor" }),
      });
      expect(create.status).toBe(201);

      const without = await fetch(`${running.url}/api/v1/admin/products`);
      expect(without.status).toBe(401);
      const forged = await fetch(`${running.url}/api/v1/admin/products`, {
        headers: { authorization: `Bearer kw_${"A".repeat(40)}` },
      });
      expect(forged.status).toBe(401);
      // The key never reaches the logs.
      expect(running.output().stdout).not.toContain(key);
    } finally {
      expect(await running.stop()).toBe(0);
    }
  });

  test("a key created with a narrower scope is refused on admin-only routes", async () => {
    const dataDir = tempDir();
    const created = runKeyward(["api-key", "create", "--scopes", "releases:write"], { env: { DATA_DIR: dataDir } });
    expect(created.exitCode).toBe(0);
    const running = await startKeyward({ env: { DATA_DIR: dataDir } });
    try {
      const res = await fetch(`${running.url}/api/v1/admin/api-keys`, { headers: { authorization: `Bearer ${created.stdout.trim()}` } });
      expect(res.status).toBe(403);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe("INSUFFICIENT_SCOPE");
    } finally {
      await running.stop();
    }
  });

  const refusals: [string, string[], string][] = [
    ["no --scopes", ["api-key", "create"], "--scopes must list"],
    ["an unknown scope", ["api-key", "create", "--scopes", "admin,root"], "unknown: root"],
    ["a missing subcommand", ["api-key"], "usage: keyward api-key create"],
    ["an unknown product", ["api-key", "create", "--scopes", "admin", "--product", "01a1fd3b-0000-7000-8000-000000000000"], "unknown product"],
  ];
  for (const [name, args, message] of refusals) {
    test(`refuses ${name} with exit 2 and prints no key`, () => {
      const r = runKeyward(args, { env: { DATA_DIR: tempDir() } });
      expect(r.exitCode).toBe(2);
      expect(r.stderr).toContain(message);
      expect(r.stdout).not.toMatch(/kw_/);
    });
  }
});

describe("keyward backup", () => {
  test("writes a consistent copy while the service is serving, with recent writes, and prints its path", async () => {
    const dataDir = tempDir();
    const key = runKeyward(["api-key", "create", "--scopes", "admin"], { env: { DATA_DIR: dataDir } }).stdout.trim();
    const running = await startKeyward({ env: { DATA_DIR: dataDir } });
    const target = join(tempDir(), "nested", "keyward-backup.db");
    try {
      const created = await fetch(`${running.url}/api/v1/admin/products`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({ name: "Backed up", slug: "backed-up" }),
      });
      expect(created.status).toBe(201);
      // The service still runs: the new row may live only in the WAL.
      const r = runKeyward(["backup", target], { env: { DATA_DIR: dataDir } });
      expect(r.exitCode).toBe(0);
      expect(r.stdout).toBe(`${target}\n`);
      expect(r.stderr).toContain("master key");
    } finally {
      expect(await running.stop()).toBe(0);
    }
    const db = new Database(target, { readonly: true });
    try {
      expect(db.query("PRAGMA integrity_check").get()).toEqual({ integrity_check: "ok" });
      expect(db.query("SELECT name FROM products WHERE slug = 'backed-up'").get()).toEqual({ name: "Backed up" });
      expect((db.query("SELECT count(*) AS n FROM api_keys").get() as { n: number }).n).toBe(1);
    } finally {
      db.close();
    }
    // Never overwrites.
    const again = runKeyward(["backup", target], { env: { DATA_DIR: dataDir } });
    expect(again.exitCode).toBe(1);
    expect(again.stderr).toContain("already exists");
  });

  test("refuses without a target, or without a database", () => {
    expect(runKeyward(["backup"], { env: { DATA_DIR: tempDir() } }).exitCode).toBe(2);
    const none = runKeyward(["backup", join(tempDir(), "x.db")], { env: { DATA_DIR: tempDir() } });
    expect(none.exitCode).toBe(1);
    expect(none.stderr).toContain("no database at");
  });
});
