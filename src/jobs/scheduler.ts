// Schedules the job passes in `keyward serve` (JOBS=on) with the process's minute timer (cron.ts: in
// process, never the OS crontab; not Bun.cron, whose first use costs start-up time and memory), and
// starts the delivery worker (delivery-worker.ts), which replaces the cron slots of the CONTINUOUS
// passes. Every node schedules every pass; the lease (lease.ts) lets one node
// run each slot. The slot is derived from the cron expression and the node's clock, so all nodes
// name the same slot for one firing.
import type { Deps } from "../deps";
import { createMinuteCron, slotOf, type CronScheduler } from "./cron";
import { startDeliveryWorker } from "./delivery-worker";
import { CONTINUOUS, JOB_PASSES, type JobPass } from "./passes";
import { NODE_ID, runPass } from "./runner";

export interface Scheduler {
  /** Stops scheduling and waits for passes already running (called before the database closes). */
  stop(): Promise<void>;
}

export function startScheduler(
  deps: Deps,
  opts: { passes?: readonly JobPass[]; cron?: CronScheduler; owner?: string; /** false: no delivery worker. */ worker?: boolean } = {},
): Scheduler {
  const passes = opts.passes ?? JOB_PASSES;
  // The timer follows the real time, as a cron does; the slot a firing names comes from deps.clock.
  const cron = opts.cron ?? createMinuteCron();
  const owner = opts.owner ?? NODE_ID;
  const running = new Set<Promise<void>>();
  // Stops a long pass (lifecycle) between pages at shutdown instead of waiting for its end.
  const abort = new AbortController();
  let stopped = false;
  const fire = (pass: JobPass) => async () => {
    if (stopped) return;
    const run = (async () => {
      try {
        const slot = slotOf(pass.schedule, deps.clock.now());
        const outcome = await runPass(deps, pass.name, { trigger: "schedule", slot, owner, passes, signal: abort.signal });
        if (outcome) deps.logger.debug("job pass ran", { job: pass.name, status: outcome.status, result: outcome.result });
      } catch (e) {
        // The claim or the finish could not reach the database: log it and let the next slot try
        // again (a rejection would be an unhandled one).
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
      abort.abort(new Error("the node is shutting down"));
      if (worker) {
        await deps.outboxNudge.stop();
        await worker.stop();
      }
      await Promise.all([...running]);
    },
  };
}
