// Schedules the job passes in `keyward serve` (JOBS=on) with Bun.cron, in process (never the OS-crontab
// overload: STYLE, known traps), and starts the delivery worker (delivery-worker.ts), which replaces
// the cron slots of the CONTINUOUS passes. Every node schedules every pass; the lease (lease.ts) lets one node
// run each slot. The slot is derived from the cron expression and the node's clock, so all nodes
// name the same slot for one firing.
import type { Deps } from "../deps";
import { MINUTE } from "../shared/clock";
import { startDeliveryWorker } from "./delivery-worker";
import { CONTINUOUS, JOB_PASSES, type JobPass } from "./passes";
import { NODE_ID, runPass } from "./runner";

const CRON_OPTIONS = { tz: "UTC" } as const;
/** How far back slotOf looks for the latest match (a weekly schedule fits). */
const MAX_LOOKBACK_MINUTES = 8 * 24 * 60;

export interface CronHandle {
  stop(): unknown;
}
/** Bun.cron's in-process overload; tests pass a fake to fire schedules by hand. */
export type CronScheduler = (schedule: string, handler: () => Promise<void>) => CronHandle;

export const bunCron: CronScheduler = (schedule, handler) => Bun.cron(schedule, handler, CRON_OPTIONS);

/**
 * The slot a firing at `now` belongs to: the latest time at or before `now` that matches `schedule`
 * (cron times are whole minutes). A firing delayed past its minute still names its own slot, so a
 * late node does not run a slot of its own beside the one the others ran.
 */
export function slotOf(schedule: string, now: Date): Date {
  let t = Math.floor(now.getTime() / MINUTE) * MINUTE;
  for (let i = 0; i < MAX_LOOKBACK_MINUTES; i++, t -= MINUTE) {
    // Bun.cron.parse returns the first match strictly after its argument.
    if (Bun.cron.parse(schedule, t - 1, CRON_OPTIONS)?.getTime() === t) return new Date(t);
  }
  return new Date(Math.floor(now.getTime() / MINUTE) * MINUTE);
}

export interface Scheduler {
  /** Stops scheduling and waits for passes already running (called before the database closes). */
  stop(): Promise<void>;
}

export function startScheduler(
  deps: Deps,
  opts: { passes?: readonly JobPass[]; cron?: CronScheduler; owner?: string; /** false: no delivery worker. */ worker?: boolean } = {},
): Scheduler {
  const passes = opts.passes ?? JOB_PASSES;
  const cron = opts.cron ?? bunCron;
  const owner = opts.owner ?? NODE_ID;
  const running = new Set<Promise<void>>();
  let stopped = false;
  const fire = (pass: JobPass) => async () => {
    if (stopped) return;
    const run = (async () => {
      try {
        const slot = slotOf(pass.schedule, deps.clock.now());
        const outcome = await runPass(deps, pass.name, { trigger: "schedule", slot, owner, passes });
        if (outcome) deps.logger.debug("job pass ran", { job: pass.name, status: outcome.status, result: outcome.result });
      } catch (e) {
        // The claim or the finish could not reach the database. Bun.cron turns a rejection into an
        // unhandled rejection (process exit): log it and let the next slot try again.
        deps.logger.error("job pass could not run", { job: pass.name, error: e });
      }
    })();
    running.add(run);
    await run;
    running.delete(run);
  };
  const handles = passes.filter((p) => p.schedule !== CONTINUOUS).map((p) => cron(p.schedule, fire(p)));
  // Emails, event fan-out and webhook requests: the delivery worker, continuously, on every node (when
  // the registry has the continuous passes: tests that register passes of their own get none).
  const continuous = opts.worker !== false && passes.some((p) => p.schedule === CONTINUOUS);
  const worker = continuous ? startDeliveryWorker(deps) : null;
  if (worker) deps.outboxNudge.start(worker.wake);
  return {
    async stop() {
      stopped = true;
      for (const h of handles) h.stop();
      if (worker) {
        await deps.outboxNudge.stop();
        await worker.stop();
      }
      await Promise.all([...running]);
    },
  };
}
