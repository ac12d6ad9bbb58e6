// verify: Keyward POST /license/verify throughput as a ratio of the floor server (bench/floor-server.ts),
// same wrk settings, alternating runs after a warm-up of each, so drift on a shared machine hits
// both sides alike; the ratio is the median of the per-round ratios. Target: ratio ≥ 0.8.
//
//   bun bench/verify.ts               (BENCH_QUICK=1 for a short smoke run)
//   bun bench/verify.ts --floor-only  (the floor alone on synthetic keys: a machine baseline)
import { rmSync } from "node:fs";
import { generateLicenseKey } from "../src/crypto/license-key";
import { ROUTES, wire } from "./lib/api";
import { activatedPairs, startFloor, type FloorProcess } from "./lib/fixtures";
import { knobs, log, median, printFailed, printRatio, printSkipped, section, type Target } from "./lib/report";
import { startKeyward, tempDir, type KeywardProcess } from "./lib/server";
import { describeRun, ensureWrk, runWrk, unexpectedStatuses, type WrkResult } from "./lib/wrk";

const NAME = "verify";
const TARGET: Target = { op: ">=", value: 0.8 };

/** The floor alone, on synthetic license keys (needs no Keyward feature): a baseline for the machine. */
async function floorOnly(o: { seconds: number; warmup: number; rounds: number; connections: number; threads: number; poolSize: number }) {
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

export async function main(): Promise<number> {
  const seconds = knobs.seconds("BENCH_SECONDS", 6, 2);
  const warmup = knobs.seconds("BENCH_WARMUP_SECONDS", 3, 1);
  const rounds = knobs.int("BENCH_ROUNDS", 5, 1);
  const connections = knobs.int("BENCH_CONNECTIONS", 64, 64);
  const threads = knobs.int("BENCH_THREADS", 1, 1);
  const poolSize = knobs.int("BENCH_VERIFY_LICENSES", 200, 50);

  if (process.argv.includes("--floor-only")) return floorOnly({ seconds, warmup, rounds, connections, threads, poolSize });

  section(`${NAME}: POST /license/verify, Keyward vs floor server`);
  await ensureWrk();
  const dir = tempDir("verify");
  let keyward: KeywardProcess | null = null;
  let floor: FloorProcess | null = null;
  try {
    keyward = await startKeyward();
    const missing = await keyward.client.missingRoutes(["adminPlans", "adminLicenses", "activate", "verify"]);
    if (missing.length) {
      printSkipped([NAME], `route missing: ${missing.join(", ")}`);
      return 0;
    }
    log(`keyward: bun src/main.ts serve (pid ${keyward.pid}), NODE_ENV=production, LOG_LEVEL=warn (access logs off)`);
    const pairs = await activatedPairs(keyward.client, poolSize);
    const bodies = pairs.map((p) => JSON.stringify(wire.verifyBody(p.key, p.identifier)));
    floor = await startFloor(pairs, dir);
    log(`floor: bench/floor-server.ts (pid ${floor.pid}); pool of ${pairs.length} activated licenses on both`);
    log(`wrk: ${threads} thread(s), ${connections} connections, ${rounds} × ${seconds} s each side after a ${warmup} s warm-up`);

    const run = (url: string, durationS: number) =>
      runWrk({ url: `${url}${ROUTES.verify}`, threads, connections, durationS, bodies });
    await run(floor.url, warmup);
    await run(keyward.url, warmup);

    // Rounds in ABBA order (floor→keyward, keyward→floor, ...) so a linear drift of the machine
    // cancels out; the ratio is the median of the per-round ratios (each round's two runs are
    // adjacent in time, so they share the machine's conditions best).
    const floorRuns: WrkResult[] = [];
    const keywardRuns: WrkResult[] = [];
    const pairRatios: number[] = [];
    for (let i = 0; i < rounds; i++) {
      const order = i % 2 === 0 ? (["floor", "keyward"] as const) : (["keyward", "floor"] as const);
      const got: Record<string, WrkResult> = {};
      for (const side of order) {
        got[side] = await run(side === "floor" ? floor.url : keyward.url, seconds);
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
    log(`per-round ratios: ${pairRatios.map((r) => r.toFixed(3)).join(", ")}`);
    if (bad.length) {
      printFailed(NAME, `non-200 responses during the runs: ${JSON.stringify(bad)}`);
      return 1;
    }
    printRatio(NAME, median(pairRatios), TARGET);
    return 0;
  } finally {
    await floor?.stop();
    await keyward?.dispose();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.main) process.exit(await main());
