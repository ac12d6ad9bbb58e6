// Runs one job pass under the lease (lease.ts): claim, run, finish. A pass that throws is recorded as
// an error in the job's last result and reported to the caller; it never throws into the scheduler.
// The fence guards the job's record only. A pass's own writes must stay safe if a stalled run and
// its successor overlap: the prune and expire passes delete rows that are past a cut-off (running
// twice deletes nothing more), and outbox messages carry their own per-message claims.
import { hostname } from "node:os";
import type { Deps } from "../deps";
import { AppError } from "../shared/errors";
import { newId } from "../shared/ids";
import { JOB_PASSES, type JobPass, type JobResult, type JobTrigger } from "./passes";

/** This process among the nodes sharing the database (lease owner): host, pid and a random suffix. */
export const NODE_ID = `${hostname()}:${process.pid}:${newId().slice(-8)}`;

const MAX_ERROR_LENGTH = 500;

export interface RunOptions {
  trigger: JobTrigger;
  /** The scheduled slot (trigger "schedule"); an admin or nudged run uses its start time. */
  slot?: Date;
  /** Lease owner; defaults to this process (tests pose as several nodes). */
  owner?: string;
  /** The pass registry; defaults to JOB_PASSES (tests register their own). */
  passes?: readonly JobPass[];
}

export interface RunOutcome {
  name: string;
  trigger: JobTrigger;
  status: "ok" | "error";
  fence: number;
  slot: Date;
  startedAt: Date;
  finishedAt: Date;
  result: JobResult | null;
  /** The error message when the pass threw. */
  error: string | null;
  /** false when the lease was taken over before the pass finished: its result was not stored. */
  recorded: boolean;
}

export function findPass(name: string, passes: readonly JobPass[] = JOB_PASSES): JobPass {
  const pass = passes.find((p) => p.name === name);
  if (!pass) throw new AppError("NOT_FOUND", { message: `No job pass named "${name}".`, details: { job: name } });
  return pass;
}

/**
 * Claims the pass (for `slot` on schedule, "now" for an admin run), runs it and records its result.
 * Null when the claim was refused: another node holds the lease, or (scheduled) already ran this slot.
 */
export async function runPass(deps: Deps, name: string, opts: RunOptions): Promise<RunOutcome | null> {
  const pass = findPass(name, opts.passes);
  const owner = opts.owner ?? NODE_ID;
  const startedAt = deps.clock.now();
  const slot = opts.slot ?? startedAt;
  const leaseUntil = new Date(startedAt.getTime() + pass.leaseMs);
  const claimed =
    opts.trigger === "schedule"
      ? await deps.repos.jobLeases.claim(name, owner, slot, leaseUntil, startedAt)
      : await deps.repos.jobLeases.claimNow(name, owner, leaseUntil, startedAt);
  if (!claimed) return null;

  let result: JobResult | null = null;
  let error: string | null = null;
  try {
    result = await pass.run(deps, { now: startedAt, slot, trigger: opts.trigger });
  } catch (e) {
    error = (e instanceof Error ? e.message : String(e)).slice(0, MAX_ERROR_LENGTH);
    deps.logger.error("job pass failed", { job: name, trigger: opts.trigger, error: e });
  }
  const finishedAt = deps.clock.now();
  const record = {
    trigger: opts.trigger,
    status: error === null ? "ok" : "error",
    ...(error === null ? { result } : { error }),
    duration_ms: finishedAt.getTime() - startedAt.getTime(),
  };
  const recorded = await deps.repos.jobLeases.finish(name, owner, claimed.fence, record, finishedAt);
  if (!recorded) deps.logger.warn("job pass outlived its lease; result not recorded", { job: name, fence: claimed.fence });
  return { name, trigger: opts.trigger, status: error === null ? "ok" : "error", fence: claimed.fence, slot, startedAt, finishedAt, result, error, recorded };
}
