// Schedules the job passes in `keyward serve` (JOBS=on) with Bun.cron, in process (never the OS-crontab
// overload: STYLE, known traps). Every node schedules every pass; the lease (lease.ts) lets one node
// run each slot. The slot is derived from the cron expression and the node's clock, so all nodes
// name the same slot for one firing.
import type { Deps } from "../deps";
import { MINUTE } from "../shared/clock";
import { DELIVER_OUTBOX, DELIVER_WEBHOOKS, JOB_PASSES, type JobPass } from "./passes";
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

export function startScheduler(deps: Deps, opts: { passes?: readonly JobPass[]; cron?: CronScheduler; owner?: string } = {}): Scheduler {
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
  const handles = passes.map((p) => cron(p.schedule, fire(p)));
  // Prompt delivery (modules/outbox/nudge.ts): a nudge runs deliver-outbox under the same lease,
  // then deliver-webhooks under its own (the events it just fanned out, a test event, a redelivery).
  const deliver = passes.find((p) => p.name === DELIVER_OUTBOX);
  const webhooks = passes.find((p) => p.name === DELIVER_WEBHOOKS);
  if (deliver) {
    deps.outboxNudge.start(async () => {
      const outcome = await runPass(deps, deliver.name, { trigger: "nudge", owner, passes });
      if (outcome) deps.logger.debug("job pass ran", { job: deliver.name, trigger: "nudge", status: outcome.status, result: outcome.result });
      if (webhooks) {
        const sent = await runPass(deps, webhooks.name, { trigger: "nudge", owner, passes });
        if (sent) deps.logger.debug("job pass ran", { job: webhooks.name, trigger: "nudge", status: sent.status, result: sent.result });
        return outcome !== null && sent !== null;
      }
      return outcome !== null;
    });
  }
  return {
    async stop() {
      stopped = true;
      for (const h of handles) h.stop();
      if (deliver) await deps.outboxNudge.stop();
      await Promise.all([...running]);
    },
  };
}
