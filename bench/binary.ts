// binary: the compiled executable as shipped (scripts/build.ts, the same build as `npm run build`) —
// time from spawn to the first 200 on GET /api/v1/health (median of 5) and idle RSS 1 s after that
// (median of 5).
// Two start kinds are measured, each against its own budget: "first" on an empty DATA_DIR
// (migrations + key generation, ≤ 100 ms) and "restart" on an existing one (≤ 50 ms); idle RSS of
// either ≤ 60 MB. Printed as measured / budget (target ≤ 1). A compiled hello-world Bun.serve is
// started in the same rounds (first, restart, hello-world, in turn), and each median is also printed
// as a multiple of its: the runtime's own floor on this machine at this load.
//
//   bun bench/binary.ts
import { rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { knobs, log, median, printRatio, section, type Target } from "./lib/report";
import { BUN, ROOT, createAdminKey, freePort, keywardEnv, procStatus, tempDir } from "./lib/server";
import { buildBinary } from "../scripts/build";

const FIRST_START_BUDGET_MS = 100;
const RESTART_BUDGET_MS = 50;
const RSS_BUDGET_MB = 60;
const TARGET: Target = { op: "<=", value: 1 };

interface StartSample {
  ms: number;
  rssMb: number;
}

/** Spawn → first 200 on /health, polling as fast as the loopback allows; then idle RSS. */
async function startOnce(binary: string, env: Record<string, string>, idleMs: number, args = ["serve"]): Promise<StartSample> {
  const url = `http://127.0.0.1:${env.PORT}/api/v1/health`;
  const t0 = performance.now();
  const proc = Bun.spawn([binary, ...args], { env, stdout: "ignore", stderr: "pipe" });
  let ms = NaN;
  try {
    for (;;) {
      if (proc.exitCode !== null) throw new Error(`binary exited with ${proc.exitCode}: ${await new Response(proc.stderr).text()}`);
      if (performance.now() - t0 > 20_000) throw new Error("no 200 on /health within 20 s");
      try {
        const res = await fetch(url);
        await res.arrayBuffer();
        if (res.status === 200) {
          ms = performance.now() - t0;
          break;
        }
      } catch {
        // not listening yet: retry immediately (connection refused returns in microseconds)
      }
      await Bun.sleep(1);
    }
    await Bun.sleep(idleMs);
    const rssMb = procStatus(proc.pid).rssKb / 1024;
    return { ms, rssMb };
  } finally {
    proc.kill("SIGTERM");
    await proc.exited;
  }
}

async function compile(entry: string, outfile: string): Promise<number> {
  const t0 = performance.now();
  const build = Bun.spawn([BUN, "build", "--compile", entry, "--outfile", outfile], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(build.stdout).text(), new Response(build.stderr).text(), build.exited]);
  if (code !== 0) throw new Error(`bun build --compile ${entry} failed:\n${out}\n${err}`);
  return performance.now() - t0;
}

// The runtime's own floor: a compiled hello-world Bun.serve answering the same path, measured the same way.
const HELLO = `Bun.serve({ hostname: "127.0.0.1", port: Number(process.env.PORT), fetch: () => Response.json({ success: true, data: { status: "ok" } }) });`;

export async function main(): Promise<number> {
  const runs = knobs.int("BENCH_BINARY_RUNS", 5, 3);
  const idleMs = knobs.int("BENCH_BINARY_IDLE_MS", 1000, 500);
  section("binary: compiled executable start-up and idle RSS");
  const dir = tempDir("binary");
  try {
    const binary = join(dir, "keyward");
    // The release build (its bundler options are part of what is measured), not a bare --compile.
    const t0 = performance.now();
    buildBinary({ outfile: binary });
    const buildMs = performance.now() - t0;
    log(`built ${binary} in ${(buildMs / 1000).toFixed(1)} s, ${(statSync(binary).size / 1024 / 1024).toFixed(1)} MB`);
    const helloSrc = join(dir, "hello.ts");
    const hello = join(dir, "hello");
    writeFileSync(helloSrc, HELLO);
    await compile(helloSrc, hello);

    const first: StartSample[] = [];
    const restart: StartSample[] = [];
    const baseline: StartSample[] = [];
    const persistent = join(dir, "data-restart");
    const restartEnv = keywardEnv(persistent, freePort());
    await createAdminKey(restartEnv, [binary]); // creates and migrates the database once
    for (let i = 0; i < runs; i++) {
      const fresh = join(dir, `data-first-${i}`);
      const f = await startOnce(binary, keywardEnv(fresh, freePort()), idleMs);
      first.push(f);
      rmSync(fresh, { recursive: true, force: true });
      const r = await startOnce(binary, { ...restartEnv, PORT: String(freePort()) }, idleMs);
      restart.push(r);
      const h = await startOnce(hello, { PORT: String(freePort()) }, idleMs, []);
      baseline.push(h);
      log(
        `run ${i + 1}: first start ${f.ms.toFixed(1)} ms / ${f.rssMb.toFixed(1)} MB; restart ${r.ms.toFixed(1)} ms / ${r.rssMb.toFixed(1)} MB; hello-world ${h.ms.toFixed(1)} ms / ${h.rssMb.toFixed(1)} MB`,
      );
    }
    const hMs = median(baseline.map((s) => s.ms));
    const hMb = median(baseline.map((s) => s.rssMb));
    log(`baseline (compiled hello-world Bun.serve): median ${hMs.toFixed(1)} ms to first 200, ${hMb.toFixed(1)} MB idle`);
    const fMs = median(first.map((s) => s.ms));
    const rMs = median(restart.map((s) => s.ms));
    const fMb = median(first.map((s) => s.rssMb));
    const rMb = median(restart.map((s) => s.rssMb));
    log(
      `median time to first 200: first start ${fMs.toFixed(1)} ms (${(fMs / hMs).toFixed(1)}× hello-world; budget ${FIRST_START_BUDGET_MS} ms), ` +
        `restart ${rMs.toFixed(1)} ms (${(rMs / hMs).toFixed(1)}× hello-world; budget ${RESTART_BUDGET_MS} ms)`,
    );
    log(
      `median idle RSS after ${idleMs} ms: first start ${fMb.toFixed(1)} MB, restart ${rMb.toFixed(1)} MB ` +
        `(hello-world + ${(Math.max(fMb, rMb) - hMb).toFixed(1)} MB; budget ${RSS_BUDGET_MB} MB)`,
    );
    printRatio("binary-startup", fMs / FIRST_START_BUDGET_MS, TARGET);
    printRatio("binary-restart", rMs / RESTART_BUDGET_MS, TARGET);
    printRatio("binary-rss", Math.max(fMb, rMb) / RSS_BUDGET_MB, TARGET);
    return 0;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.main) process.exit(await main());
