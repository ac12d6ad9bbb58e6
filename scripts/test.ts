// `npm test`: the whole suite on the embedded engine (SQLite), then the HTTP suite again on
// PostgreSQL when TEST_DATABASE_URL names a server (each test app gets its own fresh database there).
// Without TEST_DATABASE_URL the PostgreSQL pass is skipped with one line saying so. Extra arguments
// (paths, --test-name-pattern …) go to both passes.
const args = process.argv.slice(2);
const bunBin = process.execPath;

async function pass(label: string, extraArgs: string[], env: Record<string, string>): Promise<number> {
  console.log(`\n== npm test: ${label}`);
  const proc = Bun.spawn([bunBin, "test", "--timeout", "30000", ...extraArgs], {
    env: { ...process.env, ...env },
    stdio: ["inherit", "inherit", "inherit"],
  });
  return proc.exited;
}

const first = await pass("all tests, SQLite engine" + (process.env.TEST_DATABASE_URL ? " (contract suites on both engines)" : ""), args, {
  KEYWARD_TEST_ENGINE: "sqlite",
});
let second = 0;
if (process.env.TEST_DATABASE_URL) {
  second = await pass("HTTP suite, PostgreSQL engine", args.length ? args : ["test/http"], { KEYWARD_TEST_ENGINE: "postgres" });
} else {
  console.log("\n== npm test: PostgreSQL pass skipped (set TEST_DATABASE_URL=postgres://… to run the HTTP suite on PostgreSQL too)");
}
process.exit(first !== 0 ? first : second);
export {};
