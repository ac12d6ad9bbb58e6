// DataStore.transaction({ durable: true }) (db/store.ts), which license issue's unit of work uses: the
// commit reaches the disk before the transaction resolves. SQLite runs with synchronous=NORMAL, where in WAL mode a commit is synced
// only at the next checkpoint (a power cut or an OS crash can lose it); a durable commit runs with
// FULL. Counted with strace: the syncs the process makes. PostgreSQL: synchronous_commit is on for a
// durable transaction even where the database turns it off.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import postgres from "postgres";
import { openDatabase } from "../../src/db/client";
import { runMigrations } from "../../src/db/migrate";
import { createSqliteGate } from "../../src/db/transaction.sqlite";
import { openPostgres } from "../../src/db/pg";
import { withPgTransaction } from "../../src/db/transaction.pg";
import { toolTest } from "../support/tools";
import { freshPgDatabase, pgTestUrl } from "../support/pg";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), "keyward-durable-"));
  dirs.push(d);
  return d;
};

/** Syncs (fsync, fdatasync) the worker makes while it runs `count` transactions of `mode`. */
function syncsOf(mode: "durable" | "normal" | "issue" | "plan", count: number): number {
  const dir = tempDir();
  const trace = join(dir, "strace.txt");
  const run = Bun.spawnSync(
    ["strace", "-f", "-qq", "-e", "trace=fsync,fdatasync,%file", "-o", trace, process.execPath, join(import.meta.dir, "durable-worker.ts"), join(dir, "k.db"), mode, String(count)],
    { stdout: "pipe", stderr: "pipe" },
  );
  expect(run.exitCode).toBe(0);
  let counting = false;
  let syncs = 0;
  for (const line of readFileSync(trace, "utf8").split("\n")) {
    if (line.includes("BEGIN-COUNT")) counting = true;
    else if (line.includes("END-COUNT")) counting = false;
    else if (counting && /\b(fsync|fdatasync)\(/.test(line)) syncs++;
  }
  return syncs;
}

describe("SQLite", () => {
  toolTest("strace")("a durable commit is synced to disk; an ordinary one waits for the checkpoint", () => {
    expect(syncsOf("normal", 20)).toBe(0);
    expect(syncsOf("durable", 20)).toBeGreaterThanOrEqual(20);
  });

  toolTest("strace")("issuing a license through the admin API syncs its commit (the key goes to a caller that will not ask again); creating a plan does not", () => {
    expect(syncsOf("plan", 10)).toBe(0);
    expect(syncsOf("issue", 10)).toBeGreaterThanOrEqual(10);
  });

  test("the connection is back to synchronous=NORMAL after a durable transaction, committed or rolled back", async () => {
    const handle = openDatabase(join(tempDir(), "k.db"));
    runMigrations(handle.sqlite, 1);
    const gate = createSqliteGate(handle);
    const level = () => (handle.sqlite.query("PRAGMA synchronous").get() as { synchronous: number }).synchronous;
    expect(level()).toBe(1);
    expect(await gate.run(async () => level(), { durable: true })).toBe(2);
    expect(level()).toBe(1);
    expect(await gate.run(async () => level())).toBe(1);
    await expect(gate.run(async () => Promise.reject(new Error("rolled back")), { durable: true })).rejects.toThrow("rolled back");
    expect(level()).toBe(1);
    handle.close();
  });
});

describe.skipIf(!pgTestUrl())("PostgreSQL", () => {
  test("a durable transaction commits with synchronous_commit on where the database turns it off", async () => {
    const database = await freshPgDatabase("durable");
    const admin = postgres(database.url, { max: 1, onnotice: () => {} });
    await admin.unsafe(`ALTER DATABASE "${database.name}" SET synchronous_commit = off`);
    await admin.end();
    const pg = openPostgres(database.url, { max: 2 });
    try {
      const setting = (durable: boolean) =>
        withPgTransaction(pg, async (tx) => (await tx.sql<{ synchronous_commit: string }[]>`SHOW synchronous_commit`)[0]!.synchronous_commit, { durable });
      expect(await setting(false)).toBe("off");
      expect(await setting(true)).toBe("on");
    } finally {
      await pg.close();
      await database.drop();
    }
  });
});
