// One "node" of the multi-process job test (test/race/jobs.test.ts): waits for a shared start time,
// then tries to run the pass "probe" for the slot given on the command line and prints the outcome as
// one JSON line. The pass appends this process's pid to a shared file while it holds the lease.
//   sqlite:   bun job-node.ts sqlite <slotIso> <startAtMs> <markerFile>   (env: DATA_DIR, RELEASE_KEY_ENCRYPTION_KEY…)
//   postgres: bun job-node.ts postgres <slotIso> <startAtMs> <markerFile> <databaseUrl>
import { appendFileSync } from "node:fs";
import { configFromProcessEnv } from "../../../src/config";
import { createDeps } from "../../../src/container";
import { openPostgres } from "../../../src/db/pg";
import type { Deps, Repos } from "../../../src/deps";
import type { JobPass } from "../../../src/jobs/passes";
import { runPass } from "../../../src/jobs/runner";
import { createPgRepos } from "../../../src/repos.pg";
import { MINUTE, systemClock } from "../../../src/shared/clock";
import { createLogger } from "../../../src/shared/logger";

const [engine, slotIso, startAtMs, marker, url] = process.argv.slice(2);
const config = configFromProcessEnv();
const logger = createLogger("silent");
let deps: Deps;
let close: () => Promise<void>;
if (engine === "sqlite") {
  deps = await createDeps(config, systemClock, logger);
  close = () => deps.db.close();
} else {
  // The container does not select PostgreSQL yet: the pieces it will use.
  const pg = openPostgres(url!, { max: 2 });
  await pg.ping();
  deps = { config, clock: systemClock, logger, repos: createPgRepos(pg) as Repos, outboxHandlers: {} } as unknown as Deps;
  close = () => pg.close();
}

const passes: JobPass[] = [
  {
    name: "probe",
    schedule: "* * * * *",
    leaseMs: MINUTE,
    description: "multi-process test pass",
    run: async () => {
      appendFileSync(marker!, `${process.pid}\n`);
      // Hold the lease long enough for every other process to try.
      await Bun.sleep(300);
      return { pid: process.pid };
    },
  },
];

await Bun.sleep(Math.max(0, Number(startAtMs) - systemClock.nowMs()));
const outcome = await runPass(deps, "probe", { trigger: "schedule", slot: new Date(slotIso!), passes });
console.log(JSON.stringify({ pid: process.pid, ran: outcome !== null, fence: outcome?.fence ?? null, recorded: outcome?.recorded ?? null }));
await close();
