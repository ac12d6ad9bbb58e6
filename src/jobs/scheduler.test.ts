// Scheduler with a hand-fired cron: slots come from the schedule, runs go through the lease, stop()
// waits for a run in flight. (The real cron, cron.ts, fires on minute boundaries; its own tests are in cron.test.ts.)
import { afterEach, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDatabase, type DbHandle } from "../db/client";
import { runMigrations } from "../db/migrate";
import { createSqliteRepos } from "../container";
import { loadConfig } from "../config";
import type { Deps } from "../deps";
import { fixedClock, MINUTE } from "../shared/clock";
import { createLogger } from "../shared/logger";
import type { JobPass } from "./passes";
import { slotOf, type CronScheduler } from "./cron";
import { startScheduler } from "./scheduler";

let dir: string;
let db: DbHandle;
afterEach(async () => {
  await db?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test("each firing runs its pass for the current slot once; stop() waits for the run in flight", async () => {
  dir = mkdtempSync(join(tmpdir(), "keyward-scheduler-"));
  db = openDatabase(join(dir, "k.db"));
  runMigrations(db.sqlite, 0);
  const clock = fixedClock("2026-11-21T08:00:20.000Z");
  const deps = { repos: createSqliteRepos(db), clock, config: loadConfig({ NODE_ENV: "test" }), logger: createLogger("silent"), outboxHandlers: {} } as unknown as Deps;
  const fired = new Map<string, () => Promise<void>>();
  const stopped: string[] = [];
  const cron: CronScheduler = (schedule, handler) => {
    fired.set(schedule, handler);
    return { stop: () => stopped.push(schedule) };
  };
  const slots: string[] = [];
  let release: (() => void) | null = null;
  const passes: JobPass[] = [
    {
      name: "every-minute",
      schedule: "* * * * *",
      leaseMs: MINUTE,
      description: "test",
      run: async (_deps, ctx) => {
        slots.push(ctx.slot.toISOString());
        if (ctx.slot.getUTCMinutes() === 2) await new Promise<void>((r) => (release = r));
        return { n: slots.length };
      },
    },
  ];
  const scheduler = startScheduler(deps, { passes, cron, owner: "me" });
  expect([...fired.keys()]).toEqual(["* * * * *"]);
  const fire = fired.get("* * * * *")!;
  await fire();
  // A second firing in the same minute (another node's clock, or a retry) is the same slot: no run.
  await fire();
  clock.advance(MINUTE);
  await fire();
  expect(slots).toEqual(["2026-11-21T08:00:00.000Z", "2026-11-21T08:01:00.000Z"]);
  const [lease] = await deps.repos.jobLeases.list();
  expect(lease).toMatchObject({ name: "every-minute", fence: 2, lastSlotAt: new Date("2026-11-21T08:01:00.000Z"), lastResult: { trigger: "schedule", status: "ok", result: { n: 2 } } });

  clock.advance(MINUTE);
  const inFlight = fire();
  await Bun.sleep(10);
  let stopDone = false;
  const stopping = scheduler.stop().then(() => (stopDone = true));
  await Bun.sleep(10);
  expect(stopped).toEqual(["* * * * *"]);
  expect(stopDone).toBe(false);
  release!();
  await stopping;
  await inFlight;
  expect(stopDone).toBe(true);
  expect((await deps.repos.jobLeases.list())[0]).toMatchObject({ fence: 3, owner: null });
  // After stop, a firing that was already scheduled does nothing.
  clock.advance(MINUTE);
  await fire();
  expect(slots.length).toBe(3);
});
