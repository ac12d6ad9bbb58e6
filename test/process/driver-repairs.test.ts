// A PostgreSQL driver without Keyward's repairs (scripts/patch-deps.mjs; what an install with
// --ignore-scripts leaves) is refused by every command that would open PostgreSQL, with the command
// that repairs it (src/db/driver-repairs.pg.ts). Run on a copy of Keyward whose node_modules is the
// shared one except postgres.js, an unrepaired copy: the shared node_modules is never modified.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { cpSync, mkdirSync, readdirSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { driverRepairProblem } from "../../src/db/driver-repairs.pg";
import { copyUnrepaired } from "../support/unrepaired-driver";
import { ROOT, removeTempDirs, runKeyward, tempDir } from "./support";

// Nothing listens there: a command that got past the check fails on the connection instead.
const UNREACHABLE = "postgres://keyward@127.0.0.1:1/keyward";

let copy: string;
let driverDir: string;
let undone: number;
beforeAll(() => {
  copy = tempDir("keyward-unrepaired-");
  for (const dir of ["src", "scripts"]) cpSync(join(ROOT, dir), join(copy, dir), { recursive: true });
  cpSync(join(ROOT, "package.json"), join(copy, "package.json"));
  mkdirSync(join(copy, "node_modules"));
  for (const entry of readdirSync(join(ROOT, "node_modules"))) {
    if (entry !== "postgres") symlinkSync(join(ROOT, "node_modules", entry), join(copy, "node_modules", entry));
  }
  undone = copyUnrepaired(ROOT, copy).edits;
  driverDir = join(copy, "node_modules", "postgres");
});
afterAll(removeTempDirs);

const inCopy = (args: string[], env: Record<string, string> = {}) =>
  runKeyward(args, { cmd: [process.execPath, join(copy, "src/main.ts")], env: { DATA_DIR: tempDir(), RELEASE_KEY_ENCRYPTION_KEY: "ab".repeat(32), ...env } });

describe("an unrepaired postgres.js", () => {
  test("the check names the driver's directory, what is missing and the command that repairs it", async () => {
    const problem = await driverRepairProblem({ packageDir: () => driverDir });
    expect(problem).toContain(`postgres.js in ${driverDir}`);
    expect(problem).toContain("run `node scripts/patch-deps.mjs`");
    expect(problem).toContain(`(${undone} missing; first: postgres/src/connection.js: "terminate(): forget the cancelled flush and its bytes" is not applied`);
    // The repaired install this test runs on passes.
    expect(await driverRepairProblem()).toBeNull();
  });

  for (const args of [["serve"], ["migrate"], ["api-key", "create", "--scopes", "admin"], ["db", "copy", "--to", UNREACHABLE]]) {
    test(`keyward ${args[0]} refuses to start on PostgreSQL, naming the command that repairs it, exit 1`, () => {
      const r = inCopy(args, { DATABASE_URL: UNREACHABLE });
      expect(r.exitCode).toBe(1);
      const out = r.stdout + r.stderr;
      expect(out).toContain("cannot use PostgreSQL");
      expect(out).toContain("lacks Keyward's repairs");
      expect(out).toContain("node scripts/patch-deps.mjs");
      expect(out).toContain(driverDir);
      // Refused before any connection was tried (serve would otherwise wait for the database).
      expect(out).not.toContain("database unavailable");
    });
  }

  test("on SQLite the driver is not used and not checked", () => {
    const r = inCopy(["migrate"]);
    expect(r.stderr).not.toContain("cannot use PostgreSQL");
    expect(r.exitCode).toBe(0);
  });

  test("after node scripts/patch-deps.mjs the same command gets past the check (and fails on the unreachable server)", () => {
    const repair = Bun.spawnSync([process.execPath, join(copy, "scripts/patch-deps.mjs")], { cwd: copy, stdout: "pipe", stderr: "pipe" });
    expect(repair.exitCode).toBe(0);
    expect(repair.stdout.toString()).toContain("patch-deps: repaired postgres/src/connection.js");
    const r = inCopy(["migrate"], { DATABASE_URL: UNREACHABLE });
    expect(r.stderr).not.toContain("cannot use PostgreSQL");
    expect(r.stderr).toContain("cannot open the database");
    expect(r.exitCode).toBe(1);
  });
});
