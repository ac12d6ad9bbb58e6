// Builds the single Keyward executable: `bun build --compile` of src/main.ts into dist/keyward.
// Migrations ship inside it (src/db/migrations.gen.ts), so the binary needs no files beside it; the
// build refuses to run when that embedded copy is stale, or when a dependency repair is missing.
//
//   bun scripts/build.ts [--outfile PATH] [--target bun-linux-x64|bun-linux-arm64|bun-darwin-arm64|…]
import { join, resolve } from "node:path";

const root = join(import.meta.dir, "..");

export interface BuildOptions {
  outfile?: string;
  /** Bun cross-compilation target; default: the machine running the build. */
  target?: string;
}

// Precompiled bytecode embedded in the executable: at start-up JavaScriptCore loads it instead of
// parsing ~1.4 MB of bundled source (measured: time to first 200 on /health 120 → 59 ms first start,
// 104 → 55 ms restart, medians of 10 interleaved runs). ESM because main.ts uses top-level await
// (--bytecode alone means CommonJS). The source stays embedded too, so Function#toString (which
// Elysia reads) is unchanged; the executable grows by ~4 MB. Native builds only: JSC bytecode is
// specific to the platform it was produced on, and cross-compiled executables with --bytecode crash
// at launch (oven-sh/bun#18416), so a --target build ships without it.
const BYTECODE = ["--bytecode", "--format=esm"];

// JavaScriptCore's JIT tier-up thresholds ×16 until `serve` is listening (src/cli.ts resets them
// with Bun.unsafe.setJITPolicy(1)): module evaluation, route and schema construction run once, so
// compiling them is work the start-up waits for (and JIT threads compete for the CPU).
const START_JIT_POLICY = ["--compile-jit-policy=16"];

// Code splitting: a module the app loads with import() (the PostgreSQL engine, nodemailer, the
// webhook sender's node:http/https) becomes its own chunk inside the executable, loaded when it is
// first used. Without it the bundler hoists the node: imports of those modules into the entry, and
// every start loaded node:tls, node:http, node:child_process… for nothing (measured with
// bench/binary.ts on a slow machine: first 200 on /health 216 → 162 ms first start, 172 → 144 ms
// restart, idle RSS 74 → 70 MB; test/arch/startup-imports.test.ts keeps them out of the start).
const SPLITTING = ["--splitting"];

// The PostgreSQL driver is bundled as checked above (patch-deps --check): at run time the executable
// checks the loaded driver itself and reads no node_modules (src/db/driver-repairs.pg.ts).
const BUNDLED_DRIVER = ["--define", "KEYWARD_BUNDLED_DRIVER=true"];

function run(cmd: string[]): void {
  const r = Bun.spawnSync(cmd, { cwd: root, stdout: "inherit", stderr: "inherit" });
  if (r.exitCode !== 0) throw new Error(`${cmd.slice(1).join(" ")} failed with exit code ${r.exitCode}`);
}

/** Returns the absolute path of the executable. */
export function buildBinary(opts: BuildOptions = {}): string {
  const outfile = resolve(root, opts.outfile ?? "dist/keyward");
  run([process.execPath, join(root, "scripts/embed-migrations.ts"), "--check"]);
  // The executable bundles node_modules as installed: refuse to bundle a dependency whose repair
  // (scripts/patch-deps.mjs, applied by npm install) is missing, e.g. after --ignore-scripts.
  run([process.execPath, join(root, "scripts/patch-deps.mjs"), "--check"]);
  run([
    process.execPath,
    "build",
    "--compile",
    // No minification: Elysia inspects handler source to decide what each route needs (and
    // --minify-whitespace/--minify-syntax measured no start-up gain on top of bytecode).
    ...(opts.target ? [] : BYTECODE),
    ...START_JIT_POLICY,
    ...SPLITTING,
    ...BUNDLED_DRIVER,
    join(root, "src/main.ts"),
    // Worker threads are entry points of their own inside the executable (new Worker(new URL(…,
    // import.meta.url)) finds them there): the SQLite checkpoint thread (src/db/checkpointer.sqlite.ts)
    // and the lifecycle pass's thread (src/jobs/pass-thread.ts).
    join(root, "src/db/checkpoint-worker.sqlite.ts"),
    join(root, "src/jobs/pass-thread-worker.ts"),
    "--outfile",
    outfile,
    ...(opts.target ? ["--target", opts.target] : []),
  ]);
  return outfile;
}

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

if (import.meta.main) {
  try {
    const out = buildBinary({ outfile: arg("--outfile"), target: arg("--target") });
    console.log(`built ${out}`);
  } catch (e) {
    console.error((e as Error).message);
    process.exit(1);
  }
}
