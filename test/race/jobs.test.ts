// Three processes on one database each try to run the same scheduled slot of a job pass: exactly one
// runs it (the lease's conditional write), on SQLite (one file) and on PostgreSQL (TEST_DATABASE_URL).
// In-process calls cannot interleave on SQLite, so this is the test that proves the claim across nodes.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { createTestApp, type TestApp } from "../support/app";
import { openPostgres } from "../../src/db/pg";
import { runPgMigrations } from "../../src/db/migrate.pg";
import { createJobLeaseRepo } from "../../src/jobs/lease.sql";
import { pgQueryDialect } from "../../src/db/dialect/query.pg";
import type { JobLeaseRepo } from "../../src/jobs/lease";
import { freshPgDatabase, pgTestUrl } from "../support/pg";

const ROOT = join(import.meta.dir, "../..");
const SCRIPT = join(import.meta.dir, "scripts/job-node.ts");

interface NodeOutcome {
  pid: number;
  ran: boolean;
  fence: number | null;
  recorded: boolean | null;
}

async function race(args: (marker: string) => string[], env: Record<string, string>, marker: string): Promise<NodeOutcome[]> {
  if (existsSync(marker)) rmSync(marker);
  // A common start time, late enough for all three to have booted.
  const startAt = String(Date.now() + 2500);
  const procs = [0, 1, 2].map(() =>
    Bun.spawn([process.execPath, SCRIPT, ...args(marker).map((a) => (a === "START" ? startAt : a))], {
      cwd: ROOT,
      env: { ...env, PATH: process.env.PATH ?? "" },
      stdout: "pipe",
      stderr: "pipe",
    }),
  );
  const outcomes: NodeOutcome[] = [];
  for (const p of procs) {
    const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
    if (code !== 0) throw new Error(`job node exited ${code}: ${err}`);
    outcomes.push(JSON.parse(out.trim().split("\n").pop()!));
  }
  return outcomes;
}

function expectOneRun(outcomes: NodeOutcome[], marker: string, fence: number): void {
  const ran = outcomes.filter((o) => o.ran);
  expect(ran.length).toBe(1);
  expect(ran[0]).toMatchObject({ fence, recorded: true });
  // Independent evidence: only one process entered the pass.
  expect(readFileSync(marker, "utf8").trim().split("\n")).toEqual([String(ran[0]!.pid)]);
}

describe("three processes, one SQLite file", () => {
  let t: TestApp;
  const masterKey = randomBytes(32).toString("hex");
  let env: Record<string, string>;
  beforeAll(async () => {
    // Creates and migrates the database (and the token key) once, before the nodes open it.
    t = await createTestApp({ engine: "sqlite", env: { RELEASE_KEY_ENCRYPTION_KEY: masterKey } });
    env = { NODE_ENV: "test", DATA_DIR: t.dataDir, RELEASE_KEY_ENCRYPTION_KEY: masterKey, LOG_LEVEL: "silent" };
  });
  afterAll(() => t.close());

  test("exactly one runs each slot; a slot that ran is not run again", async () => {
    const marker = join(t.dataDir, "probe-runs.txt");
    const args = (slot: string) => (m: string) => ["sqlite", slot, "START", m];
    expectOneRun(await race(args("2026-11-21T08:00:00.000Z"), env, marker), marker, 1);
    const again = await race(args("2026-11-21T08:00:00.000Z"), env, marker);
    expect(again.filter((o) => o.ran)).toEqual([]);
    expect(existsSync(marker)).toBe(false);
    expectOneRun(await race(args("2026-11-21T08:01:00.000Z"), env, marker), marker, 2);
    const [lease] = await t.deps.repos.jobLeases.list();
    expect(lease).toMatchObject({ name: "probe", owner: null, fence: 2, lastSlotAt: new Date("2026-11-21T08:01:00.000Z") });
  }, 60_000);
});

describe.skipIf(!pgTestUrl())("three processes, one PostgreSQL database", () => {
  let db: Awaited<ReturnType<typeof freshPgDatabase>>;
  let close: () => Promise<void>;
  let leases: JobLeaseRepo;
  beforeAll(async () => {
    db = await freshPgDatabase("jobs_race");
    const pg = openPostgres(db.url, { max: 2 });
    await runPgMigrations(pg.sql, Date.now());
    leases = createJobLeaseRepo(pgQueryDialect(pg));
    close = async () => {
      await pg.close();
      await db.drop();
    };
  });
  afterAll(() => close?.());

  test("exactly one runs each slot", async () => {
    const marker = join(ROOT, `.probe-runs-${process.pid}.txt`);
    try {
      const env = { NODE_ENV: "test", LOG_LEVEL: "silent", DATA_DIR: join(ROOT, ".unused-data") };
      const args = (slot: string) => (m: string) => ["postgres", slot, "START", m, db.url];
      expectOneRun(await race(args("2026-11-21T08:00:00.000Z"), env, marker), marker, 1);
      expectOneRun(await race(args("2026-11-21T08:01:00.000Z"), env, marker), marker, 2);
      expect((await leases.list())[0]).toMatchObject({ name: "probe", owner: null, fence: 2 });
    } finally {
      rmSync(marker, { force: true });
    }
  }, 60_000);
});
