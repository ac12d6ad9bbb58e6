// verify: Keyward POST /license/verify throughput as a ratio of the floor server (bench/floor-server.ts),
// same wrk settings, alternating runs after a warm-up of each, so drift on a shared machine hits
// both sides alike; the ratio is the median of the per-round ratios. Target: ratio ≥ 0.8.
//
// Run on SQLite (`verify`, target ≥ 0.8) and, when BENCH_PG_URL or TEST_DATABASE_URL names a
// PostgreSQL server, on PostgreSQL (`verify-pg`, target ≥ 0.7, against a PostgreSQL floor).
//
//   bun bench/verify.ts                  (BENCH_QUICK=1 for a short smoke run)
//   bun bench/verify.ts --engine pg      (one engine only: sqlite or pg)
//   bun bench/verify.ts --floor-only     (the floor alone on synthetic keys: a machine baseline)
//   bun bench/verify.ts --ladder         (SQLite: where the distance to the floor goes, step by step;
//                                         bench/verify-ladder-server.ts; figures only, no target)
import { readFileSync, rmSync } from "node:fs";
import type { Subprocess } from "bun";
import { generateLicenseKey } from "../src/crypto/license-key";
import { ROUTES, wire } from "./lib/api";
import { activatedPairs, startFloor, type FloorProcess } from "./lib/fixtures";
import { knobs, loadAverage, log, median, printFailed, printRatio, printSkipped, section, type Target } from "./lib/report";
import { benchPgUrl, freshBenchDatabase, pgSkipReason, type BenchDatabase } from "./lib/pg";
import { BUN, freePort, ROOT, startKeyward, tempDir, waitForHealth, type KeywardProcess } from "./lib/server";
import { describeRun, ensureWrk, runWrk, unexpectedStatuses, type WrkResult } from "./lib/wrk";

const NAME = "verify";
const NAME_PG = "verify-pg";
const TARGET: Target = { op: ">=", value: 0.8 };
const TARGET_PG: Target = { op: ">=", value: 0.7 };
/** Connections per side on PostgreSQL: Keyward's DATABASE_POOL_SIZE default, the floor's pool alike. */
const PG_POOL = 10;

/** The floor alone, on synthetic license keys (needs no Keyward feature): a baseline for the machine. */
async function floorOnly(o: RunOptions) {
  section(`${NAME}: floor server alone (baseline)`);
  await ensureWrk();
  const dir = tempDir("verify");
  const pairs = Array.from({ length: o.poolSize }, (_, i) => ({ key: generateLicenseKey("KW"), identifier: `device-${i}` }));
  const floor = await startFloor(pairs, dir);
  try {
    const run = (d: number) =>
      runWrk({
        url: `${floor.url}${ROUTES.verify}`,
        threads: o.threads,
        connections: o.connections,
        durationS: d,
        bodies: pairs.map((p) => JSON.stringify(wire.verifyBody(p.key, p.identifier))),
      });
    await run(o.warmup);
    const runs: WrkResult[] = [];
    for (let i = 0; i < o.rounds; i++) {
      runs.push(await run(o.seconds));
      log(describeRun(`floor #${i + 1}`, runs[i]!));
    }
    log(`median: floor ${median(runs.map((r) => r.rps)).toFixed(0)} req/s, p50 ${median(runs.map((r) => r.latencyMs.p50)).toFixed(2)} ms`);
    return 0;
  } finally {
    await floor.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Server CPU time (user + system) of a process so far, in microseconds (Linux /proc). */
function cpuMicros(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return ((Number(fields[11]) + Number(fields[12])) * 1e6) / 100; // clock ticks (USER_HZ = 100)
}

/** The steps of bench/verify-ladder-server.ts, each adding one layer of the HTTP contract. */
const LADDER = ["service", "+ address", "+ request-id", "+ strict-body", "+ schemas"];

/**
 * The ladder: the floor, Keyward's verify in a bare Bun.serve route with the contract's layers added
 * one at a time (bench/verify-ladder-server.ts), and Keyward itself, all on one SQLite file and one
 * pool of licenses, measured in rotating order (forward, then backward, ...) so drift hits every step
 * alike. Prints each step's median throughput ratio to the floor and its server CPU per verify.
 */
async function ladder(o: RunOptions): Promise<number> {
  section(`${NAME} ladder: from the floor to Keyward, one layer at a time (SQLite)`);
  await ensureWrk();
  const dir = tempDir("verify");
  const keyward = await startKeyward();
  const steps: { name: string; url: string; pid: number; stop(): Promise<void> }[] = [];
  try {
    const pairs = await activatedPairs(keyward.client, o.poolSize);
    const bodies = pairs.map((p) => JSON.stringify(wire.verifyBody(p.key, p.identifier)));
    const floor = await startFloor(pairs, dir);
    steps.push({ name: "floor", ...floor });
    for (let layers = 0; layers < LADDER.length; layers++) {
      const port = freePort();
      const proc: Subprocess = Bun.spawn([BUN, "bench/verify-ladder-server.ts", "--port", String(port), "--layers", String(layers)], {
        cwd: ROOT,
        env: { ...keyward.env, PORT: String(port) },
        stdout: "ignore",
        stderr: "inherit",
      });
      const url = `http://127.0.0.1:${port}`;
      await waitForHealth(url, 20_000, proc);
      steps.push({
        name: LADDER[layers]!,
        url,
        pid: proc.pid,
        async stop() {
          if (proc.exitCode === null) proc.kill("SIGTERM");
          await proc.exited;
        },
      });
    }
    steps.push({ name: "keyward", url: keyward.url, pid: keyward.pid, stop: async () => {} });
    log(`steps: ${steps.map((s) => s.name).join(" → ")}; each its own process, one at a time under wrk`);
    log(`wrk: ${o.threads} thread(s), ${o.connections} connections, ${o.rounds} × ${o.seconds} s per step after a ${o.warmup} s warm-up`);
    const run = (url: string, durationS: number) =>
      runWrk({ url: `${url}${ROUTES.verify}`, threads: o.threads, connections: o.connections, durationS, bodies });
    for (const s of steps) await run(s.url, o.warmup);
    const rps = steps.map(() => [] as number[]);
    const cpu = steps.map(() => [] as number[]);
    const ratios = steps.map(() => [] as number[]);
    const bad: Record<string, Record<string, number>> = {};
    for (let round = 0; round < o.rounds; round++) {
      const order = steps.map((_, i) => i);
      if (round % 2 === 1) order.reverse();
      for (const i of order) {
        const before = cpuMicros(steps[i]!.pid);
        const r = await run(steps[i]!.url, o.seconds);
        const used = cpuMicros(steps[i]!.pid) - before;
        rps[i]!.push(r.rps);
        cpu[i]!.push(used / Math.max(1, r.requests));
        const u = unexpectedStatuses(r, [200]);
        if (Object.keys(u).length) bad[steps[i]!.name] = u;
      }
      for (let i = 0; i < steps.length; i++) ratios[i]!.push(rps[i]![round]! / rps[0]![round]!);
    }
    if (Object.keys(bad).length) {
      printFailed(`${NAME}-ladder`, `non-200 responses during the runs: ${JSON.stringify(bad)}`);
      return 1;
    }
    log(`load average now ${loadAverage()}`);
    log("step              req/s   of floor  (per round)                     CPU per verify");
    for (let i = 0; i < steps.length; i++) {
      log(
        `${steps[i]!.name.padEnd(15)} ${median(rps[i]!).toFixed(0).padStart(7)}   ${median(ratios[i]!).toFixed(3)}     (${ratios[i]!.map((r) => r.toFixed(2)).join(" ")})`.padEnd(72) +
          `${median(cpu[i]!).toFixed(1)} µs`,
      );
    }
    return 0;
  } finally {
    for (const s of steps) await s.stop();
    await keyward.dispose();
    rmSync(dir, { recursive: true, force: true });
  }
}

interface RunOptions {
  seconds: number;
  warmup: number;
  rounds: number;
  connections: number;
  threads: number;
  poolSize: number;
}

/**
 * One engine: Keyward vs its floor. SQLite: Keyward on its SQLite file vs the bun:sqlite floor.
 * PostgreSQL: Keyward on a fresh database (DATABASE_URL) vs the floor reading from another fresh
 * database on the same server through a pool of the same size (DATABASE_POOL_SIZE default, 10).
 */
async function compare(name: string, o: RunOptions, pgBase: string | null): Promise<number> {
  section(`${name}: POST /license/verify, Keyward vs floor server (${pgBase ? "PostgreSQL" : "SQLite"})`);
  await ensureWrk();
  const dir = tempDir("verify");
  let keyward: KeywardProcess | null = null;
  let floor: FloorProcess | null = null;
  const databases: BenchDatabase[] = [];
  try {
    let extraEnv: Record<string, string> = {};
    let floorDb: string | undefined;
    if (pgBase) {
      const kw = await freshBenchDatabase(pgBase, "verify");
      databases.push(kw);
      const fl = await freshBenchDatabase(pgBase, "floor");
      databases.push(fl);
      extraEnv = { DATABASE_URL: kw.url, DATABASE_POOL_SIZE: String(PG_POOL) };
      floorDb = fl.url;
    }
    keyward = await startKeyward({ extraEnv });
    const missing = await keyward.client.missingRoutes(["adminPlans", "adminLicenses", "activate", "verify"]);
    if (missing.length) {
      printSkipped([name], `route missing: ${missing.join(", ")}`);
      return 0;
    }
    log(
      `keyward: bun src/main.ts serve (pid ${keyward.pid}), NODE_ENV=production, LOG_LEVEL=warn (access logs off)${pgBase ? `, DATABASE_URL=…/${databases[0]!.name} (pool ${PG_POOL})` : ", SQLite"}`,
    );
    const pairs = await activatedPairs(keyward.client, o.poolSize);
    const bodies = pairs.map((p) => JSON.stringify(wire.verifyBody(p.key, p.identifier)));
    floor = await startFloor(pairs, dir, floorDb ? { pg: floorDb, pool: PG_POOL } : {});
    log(
      `floor: bench/floor-server.ts (pid ${floor.pid})${floorDb ? `, PostgreSQL …/${databases[1]!.name} (pool ${PG_POOL})` : ", bun:sqlite"}; pool of ${pairs.length} activated licenses on both`,
    );
    log(`wrk: ${o.threads} thread(s), ${o.connections} connections, ${o.rounds} × ${o.seconds} s each side after a ${o.warmup} s warm-up`);

    const run = (url: string, durationS: number) =>
      runWrk({ url: `${url}${ROUTES.verify}`, threads: o.threads, connections: o.connections, durationS, bodies });
    await run(floor.url, o.warmup);
    await run(keyward.url, o.warmup);

    // Rounds in ABBA order (floor→keyward, keyward→floor, ...) so a linear drift of the machine
    // cancels out; the ratio is the median of the per-round ratios (each round's two runs are
    // adjacent in time, so they share the machine's conditions best).
    const floorRuns: WrkResult[] = [];
    const keywardRuns: WrkResult[] = [];
    const pairRatios: number[] = [];
    // Server CPU (all threads, user + system) per verify of each side: throughput alone does not say
    // whether a side does less work or spreads it over more cores (Keyward signs on the thread pool
    // under load: src/crypto/offload.ts).
    const cpu = { floor: [] as number[], keyward: [] as number[] };
    for (let i = 0; i < o.rounds; i++) {
      const order = i % 2 === 0 ? (["floor", "keyward"] as const) : (["keyward", "floor"] as const);
      const got: Record<string, WrkResult> = {};
      for (const side of order) {
        const pid = side === "floor" ? floor.pid : keyward.pid;
        const before = cpuMicros(pid);
        got[side] = await run(side === "floor" ? floor.url : keyward.url, o.seconds);
        cpu[side].push((cpuMicros(pid) - before) / Math.max(1, got[side]!.requests));
        log(describeRun(`${side.padEnd(7)} #${i + 1}`, got[side]!));
      }
      floorRuns.push(got.floor!);
      keywardRuns.push(got.keyward!);
      pairRatios.push(got.keyward!.rps / got.floor!.rps);
    }
    const bad = [...floorRuns, ...keywardRuns].map((r) => unexpectedStatuses(r, [200])).filter((u) => Object.keys(u).length);
    const floorRps = median(floorRuns.map((r) => r.rps));
    const keywardRps = median(keywardRuns.map((r) => r.rps));
    log(`median: floor ${floorRps.toFixed(0)} req/s, keyward ${keywardRps.toFixed(0)} req/s (ratio of medians ${(keywardRps / floorRps).toFixed(3)})`);
    log(
      `median p50: floor ${median(floorRuns.map((r) => r.latencyMs.p50)).toFixed(2)} ms, keyward ${median(keywardRuns.map((r) => r.latencyMs.p50)).toFixed(2)} ms`,
    );
    log(`per-round ratios: ${pairRatios.map((r) => r.toFixed(3)).join(", ")} (load average now ${loadAverage()})`);
    const cpuFloor = median(cpu.floor);
    const cpuKeyward = median(cpu.keyward);
    log(
      `median server CPU per verify (all threads): floor ${cpuFloor.toFixed(1)} µs, keyward ${cpuKeyward.toFixed(1)} µs (floor/keyward ${(cpuFloor / cpuKeyward).toFixed(3)})`,
    );
    if (bad.length) {
      printFailed(name, `non-200 responses during the runs: ${JSON.stringify(bad)}`);
      return 1;
    }
    printRatio(name, median(pairRatios), pgBase ? TARGET_PG : TARGET);
    return 0;
  } finally {
    await floor?.stop();
    await keyward?.dispose();
    for (const d of databases) await d.drop();
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function main(): Promise<number> {
  const o: RunOptions = {
    seconds: knobs.seconds("BENCH_SECONDS", 6, 2),
    warmup: knobs.seconds("BENCH_WARMUP_SECONDS", 3, 1),
    rounds: knobs.int("BENCH_ROUNDS", 5, 1),
    connections: knobs.int("BENCH_CONNECTIONS", 64, 64),
    threads: knobs.int("BENCH_THREADS", 1, 1),
    poolSize: knobs.int("BENCH_VERIFY_LICENSES", 200, 50),
  };
  if (process.argv.includes("--floor-only")) return floorOnly(o);
  if (process.argv.includes("--ladder")) return ladder(o);
  // `--engine sqlite|pg` runs one side only (profiling); both by default.
  const only = process.argv.includes("--engine") ? process.argv[process.argv.indexOf("--engine") + 1] : null;
  let code = 0;
  if (only !== "pg") code |= await compare(NAME, o, null);
  if (only !== "sqlite") {
    const pg = benchPgUrl();
    if (pg) code |= await compare(NAME_PG, o, pg);
    else printSkipped([NAME_PG], pgSkipReason);
  }
  return code;
}

if (import.meta.main) process.exit(await main());
