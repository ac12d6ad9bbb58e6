// Crash safety: SIGKILL the real server mid-load and restart it on the same DATA_DIR. The database
// must pass `PRAGMA integrity_check` and reflect every acknowledged (2xx) activation and usage
// increment, with no limit exceeded. A longer variant runs many cycles: bench/soak.ts.
import { afterAll, expect, test } from "bun:test";
import { join } from "node:path";
import { rmSync } from "node:fs";
import { checkDatabase, createWorld, loadAndKill, restart, summarize, type CrashWorld } from "./lib/crash";
import { Rng, seedFromEnv } from "./lib/prng";
import { missingRoutes } from "./lib/routes";
import type { KeywardProcess } from "../../bench/lib/server";

const missing = await missingRoutes("crash", ["adminPlans", "adminLicenses", "activate", "usage"]);
let world: CrashWorld | null = null;
const servers: KeywardProcess[] = [];

afterAll(async () => {
  for (const s of servers) await s.kill(); // no-op for servers already stopped
  if (world) rmSync(world.dataDir, { recursive: true, force: true });
});

test.skipIf(missing.length > 0)(
  "SIGKILL mid-load loses nothing acknowledged and exceeds no limit",
  async () => {
    const seed = seedFromEnv("CRASH_SEED");
    console.log(`crash test seed=${seed} (replay with CRASH_SEED=${seed})`);
    const rng = new Rng(seed);
    const created = await createWorld();
    servers.push(created.server);
    world = created.world;
    const report = await loadAndKill(created.server, world, rng, { workers: 8, killAfterMs: rng.int(700, 1200) });

    // The harness must have exercised what it claims: real load, and requests cut off by the kill.
    expect(report.unexpected).toEqual([]);
    expect(report.ackedActivations).toBeGreaterThan(10);
    expect(report.ackedUsage).toBeGreaterThan(10);
    expect(report.inFlightAtKill).toBeGreaterThan(0);

    const again = await restart(world);
    servers.push(again);
    expect((await again.client.health()).status).toBe(200);
    await again.stop();

    const problems = checkDatabase(world, join(world.dataDir, "keyward.db"));
    console.log(`${summarize(world)}; killed after ${report.killedAfterMs} ms with ${report.inFlightAtKill} requests in flight`);
    expect(problems).toEqual([]);
  },
  30_000,
);
