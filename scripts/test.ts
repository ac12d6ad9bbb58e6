// `npm test`: the whole suite on the embedded engine (SQLite), then the HTTP suite again on
// PostgreSQL when TEST_DATABASE_URL names a server (each test app gets its own fresh database there).
// Without TEST_DATABASE_URL the PostgreSQL pass is skipped with one line saying so. Extra arguments
// (paths, --test-name-pattern …) go to both passes.
//
// Each pass's output goes through as it comes; its failed tests are also gathered and repeated in a
// summary at the very end, so the last lines of a long CI log say what failed in either pass.
const args = process.argv.slice(2);
const bunBin = process.execPath;

interface PassResult {
  label: string;
  code: number;
  failed: string[];
}

async function pass(label: string, extraArgs: string[], env: Record<string, string>): Promise<PassResult> {
  console.log(`\n== npm test: ${label}`);
  const proc = Bun.spawn([bunBin, "test", "--timeout", "30000", ...extraArgs], {
    env: { ...process.env, ...env },
    stdio: ["inherit", "inherit", "pipe"],
  });
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
    process.stderr.write(chunk);
    const text = rest + decoder.decode(chunk, { stream: true });
    const lines = text.split("\n");
    rest = lines.pop() ?? "";
    for (const line of lines) scan(line.replace(/\x1b\[[0-9;]*m/g, ""));
  }
  if (rest) scan(rest.replace(/\x1b\[[0-9;]*m/g, ""));
  return { label, code: await proc.exited, failed };
}

const results: PassResult[] = [];
results.push(
  await pass("all tests, SQLite engine" + (process.env.TEST_DATABASE_URL ? " (contract suites on both engines)" : ""), args, {
    KEYWARD_TEST_ENGINE: "sqlite",
  }),
);
if (process.env.TEST_DATABASE_URL) {
  results.push(await pass("HTTP suite, PostgreSQL engine", args.length ? args : ["test/http"], { KEYWARD_TEST_ENGINE: "postgres" }));
} else {
  console.log("\n== npm test: PostgreSQL pass skipped (set TEST_DATABASE_URL=postgres://… to run the HTTP suite on PostgreSQL too)");
}
console.log("\n== npm test: summary");
for (const r of results) {
  console.log(`${r.label}: ${r.code === 0 ? "passed" : `FAILED (exit ${r.code})`}`);
  for (const f of r.failed) console.log(`  ${f}`);
}
process.exit(results.find((r) => r.code !== 0)?.code ?? 0);
export {};
