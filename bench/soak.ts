// soak: the crash test (test/reliability/crash.test.ts) for longer — repeated cycles of concurrent
// activations and usage, SIGKILL at a random moment, restart on the same DATA_DIR, and the full
// database check after every restart. Not part of `npm run bench` (it has no ratio); run it alone:
//
//   bun bench/soak.ts                      (SOAK_SECONDS=120, SOAK_WORKERS=16; CRASH_SEED to replay)
import { join } from "node:path";
import { rmSync } from "node:fs";
import { checkDatabase, createWorld, loadAndKill, restart, summarize } from "../test/reliability/lib/crash";
import { Rng, seedFromEnv } from "../test/reliability/lib/prng";
import { missingRoutes } from "../test/reliability/lib/routes";
import { log, section } from "./lib/report";

async function main(): Promise<number> {
  const seconds = Number(process.env.SOAK_SECONDS ?? 120);
  const workers = Number(process.env.SOAK_WORKERS ?? 16);
  const seed = seedFromEnv("CRASH_SEED");
  const rng = new Rng(seed);
  section(`soak: SIGKILL/restart cycles for ${seconds} s, ${workers} + ${workers} clients, seed ${seed}`);
  const missing = await missingRoutes("soak", ["adminPlans", "adminLicenses", "activate", "usage"]);
  if (missing.length) {
    console.log(`soak: SKIPPED (route missing: ${missing.join(", ")})`);
    return 0;
  }
  const started = performance.now();
  let { world, server } = await createWorld();
  try {
    while ((performance.now() - started) / 1000 < seconds) {
      const report = await loadAndKill(server, world, rng, { workers, killAfterMs: rng.int(300, 3000) });
      server = await restart(world);
      await server.stop();
      const problems = [...report.unexpected, ...checkDatabase(world, join(world.dataDir, "keyward.db"))];
      log(
        `cycle ${world.cycles}: killed after ${report.killedAfterMs} ms, ${report.inFlightAtKill} in flight, +${report.ackedActivations} activations, +${report.ackedUsage} usage acks → ${problems.length ? "PROBLEMS" : "ok"}`,
      );
      if (problems.length) {
        for (const p of problems) log(`PROBLEM: ${p}`);
        console.log(`soak: FAILED (${problems.length} problem(s) after cycle ${world.cycles}; replay with CRASH_SEED=${seed})`);
        return 1;
      }
      server = await restart(world);
    }
    log(summarize(world));
    console.log(`soak: OK (${world.cycles} crash cycles, database sound and complete after each)`);
    return 0;
  } finally {
    await server.stop();
    rmSync(world.dataDir, { recursive: true, force: true });
  }
}

process.exit(await main());
