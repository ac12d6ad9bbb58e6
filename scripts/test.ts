// `npm test`: the whole suite on the embedded engine (SQLite), and the HTTP suite again on
// PostgreSQL when TEST_DATABASE_URL names a server (each test app gets its own fresh database there).
// Without TEST_DATABASE_URL the PostgreSQL pass is skipped with one line saying so. Extra arguments
// (paths, --test-name-pattern …) go to both passes, which then run one after the other.
//
// Without arguments the two passes share the machine: the PostgreSQL pass runs beside the SQLite
// pass's folders that measure no time (BESIDE), and the folders whose tests race processes, time
// deliveries or start servers and browsers (ALONE) run after both, with the machine to themselves.
// On a 2-core machine that took the suite from ~605 s of tests, one pass after the other, to about
// the length of the SQLite pass.
//
// Each pass's output goes through as it comes (the PostgreSQL pass's when it ends, so the two do not
// interleave); its failed tests are also gathered and repeated in a summary at the very end, so the
// last lines of a long CI log say what failed in either pass.
import { readdirSync } from "node:fs";
import { join } from "node:path";

const args = process.argv.slice(2);
const bunBin = process.execPath;

interface PassResult {
  label: string;
  code: number;
  failed: string[];
}

async function pass(label: string, extraArgs: string[], env: Record<string, string>, opts: { buffered?: boolean } = {}): Promise<PassResult> {
  const held: Uint8Array[] = [];
  const write = (chunk: Uint8Array) => (opts.buffered ? held.push(chunk) : process.stderr.write(chunk));
  if (!opts.buffered) console.log(`\n== npm test: ${label}`);
  const proc = Bun.spawn([bunBin, "test", "--timeout", "30000", ...extraArgs], {
    env: { ...process.env, ...env },
    stdio: ["inherit", opts.buffered ? "pipe" : "inherit", "pipe"],
  });
  const stdout = opts.buffered ? (async () => { for await (const chunk of proc.stdout as ReadableStream<Uint8Array>) held.push(chunk); })() : null;
  const failed: string[] = [];
  let file = "";
  let rest = "";
  const decoder = new TextDecoder();
  const scan = (line: string) => {
    // bun test names the file on a line of its own ("path/x.test.ts:"), then one line per test.
    if (/^\S.*\.(test|spec)\.[cm]?[jt]sx?:$/.test(line)) file = line.slice(0, -1);
    else if (line.startsWith("(fail) ") && !failed.some((f) => f.endsWith(line))) failed.push(`${file ? `${file}: ` : ""}${line}`);
  };
  for await (const chunk of proc.stderr) {
    write(chunk);
    const text = rest + decoder.decode(chunk, { stream: true });
    const lines = text.split("\n");
    rest = lines.pop() ?? "";
    for (const line of lines) scan(line.replace(/\x1b\[[0-9;]*m/g, ""));
  }
  if (rest) scan(rest.replace(/\x1b\[[0-9;]*m/g, ""));
  await stdout;
  const code = await proc.exited;
  if (opts.buffered) {
    console.log(`\n== npm test: ${label} (ran beside the pass above; its output as it ended)`);
    for (const chunk of held) process.stderr.write(chunk);
  }
  return { label, code, failed };
}

/** Folders whose tests measure time, race processes or start servers and browsers: they run alone. */
const ALONE = ["test/race", "test/reliability", "test/process", "test/browser", "test/jobs", "test/db"];
/** Everything else: these run beside the PostgreSQL pass. */
const BESIDE = ["src", "test/arch", "test/contract", "test/golden", "test/http", "test/storage"];

// A new test folder must be placed in one list, or it would silently not run.
const root = join(import.meta.dir, "..");
const unplaced = readdirSync(join(root, "test"), { withFileTypes: true })
  .filter((d) => d.isDirectory() && d.name !== "support" && !ALONE.includes(`test/${d.name}`) && !BESIDE.includes(`test/${d.name}`))
  .map((d) => `test/${d.name}`);
if (unplaced.length) {
  console.error(`scripts/test.ts: place ${unplaced.join(", ")} in ALONE or BESIDE`);
  process.exit(2);
}

const results: PassResult[] = [];
const sqliteLabel = "all tests, SQLite engine" + (process.env.TEST_DATABASE_URL ? " (contract suites on both engines)" : "");
const pgLabel = "HTTP suite, PostgreSQL engine";
if (args.length || !process.env.TEST_DATABASE_URL) {
  results.push(await pass(sqliteLabel, args, { KEYWARD_TEST_ENGINE: "sqlite" }));
  if (process.env.TEST_DATABASE_URL) {
    results.push(await pass(pgLabel, args.length ? args : ["test/http"], { KEYWARD_TEST_ENGINE: "postgres" }));
  } else {
    console.log("\n== npm test: PostgreSQL pass skipped (set TEST_DATABASE_URL=postgres://… to run the HTTP suite on PostgreSQL too)");
  }
} else {
  const [sqlite, pg] = await Promise.all([
    pass(`${sqliteLabel}: ${BESIDE.join(" ")}`, BESIDE, { KEYWARD_TEST_ENGINE: "sqlite" }),
    pass(pgLabel, ["test/http"], { KEYWARD_TEST_ENGINE: "postgres" }, { buffered: true }),
  ]);
  results.push(sqlite, pg);
  results.push(await pass(`${sqliteLabel}: ${ALONE.join(" ")}, alone`, ALONE, { KEYWARD_TEST_ENGINE: "sqlite" }));
}
console.log("\n== npm test: summary");
for (const r of results) {
  console.log(`${r.label}: ${r.code === 0 ? "passed" : `FAILED (exit ${r.code})`}`);
  for (const f of r.failed) console.log(`  ${f}`);
}
process.exit(results.find((r) => r.code !== 0)?.code ?? 0);
export {};
