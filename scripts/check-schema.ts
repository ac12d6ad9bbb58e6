// `npm run db:check` (CI): the schema, its migrations and their embedded copies agree.
// 1. src/db/schema-pg/ is what scripts/gen-pg-schema.ts writes from src/db/schema/ (one source);
// 2. drizzle-kit finds nothing to migrate on either engine (no schema change without its migration):
//    run against copies of drizzle/ and drizzle-pg/ in a temporary directory, so the tree is untouched;
// 3. the migrations embedded in the executable are those of drizzle/ and drizzle-pg/.
import { cpSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { stalePgSchema } from "./gen-pg-schema";

const root = join(import.meta.dir, "..");
let failed = false;

const stale = stalePgSchema();
if (stale.length) {
  console.error(`error: stale, run npm run db:generate: ${stale.join(", ")}`);
  failed = true;
}

const tmp = mkdtempSync(join(tmpdir(), "keyward-db-check-"));
try {
  for (const [dialect, schema, out] of [
    ["sqlite", "src/db/schema/index.ts", "drizzle"],
    ["postgresql", "src/db/schema-pg/index.ts", "drizzle-pg"],
  ] as const) {
    cpSync(join(root, out), join(tmp, out), { recursive: true });
    const before = readdirSync(join(tmp, out)).length;
    const config = join(tmp, `${out}.config.js`);
    // drizzle-kit reads `out` relative to the working directory (an absolute one becomes ".//tmp/…").
    writeFileSync(config, `module.exports = ${JSON.stringify({ dialect, schema, out: relative(root, join(tmp, out)) })};\n`);
    const run = Bun.spawnSync([join(root, "node_modules/.bin/drizzle-kit"), "generate", "--config", config], { cwd: root, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
    const said = `${run.stdout}${run.stderr}`;
    if (readdirSync(join(tmp, out)).length !== before) {
      const added = readdirSync(join(tmp, out)).filter((f) => f.endsWith(".sql")).sort().at(-1);
      console.error(`error: ${schema} has changes without a migration in ${out}/ (drizzle-kit would write ${added}): run npm run db:generate`);
      failed = true;
    } else if (run.exitCode !== 0 || !said.includes("No schema changes")) {
      // drizzle-kit can print an error and still exit 0: only its "nothing to migrate" counts.
      console.error(`error: drizzle-kit generate (${dialect}) did not say the schema is unchanged:\n${said}`);
      failed = true;
    }
  }
} finally {
  rmSync(tmp, { recursive: true, force: true });
}

const embedded = Bun.spawnSync([process.execPath, join(root, "scripts/embed-migrations.ts"), "--check"], { cwd: root, stdout: "inherit", stderr: "inherit" });
if (embedded.exitCode !== 0) failed = true;

if (failed) process.exit(1);
console.log("db:check: one schema source, no pending migration, embedded migrations current");
