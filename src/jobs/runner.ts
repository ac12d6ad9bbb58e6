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
  /** Aborted when the node shuts down: a long pass stops between pages (the scheduler's stop). */
  signal?: AbortSignal;
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

/** A run whose claim succeeded: what its record and its poll show while it runs. */
export interface ClaimedRun {
  name: string;
  trigger: JobTrigger;
  fence: number;
  slot: Date;
  startedAt: Date;
  leaseUntil: Date;
}

async function claimPass(deps: Deps, pass: JobPass, owner: string, opts: RunOptions): Promise<ClaimedRun | null> {
  const startedAt = deps.clock.now();
  const slot = opts.slot ?? startedAt;
  const leaseUntil = new Date(startedAt.getTime() + pass.leaseMs);
  const claimed =
    opts.trigger === "schedule"
      ? await deps.repos.jobLeases.claim(pass.name, owner, slot, leaseUntil, startedAt)
      : await deps.repos.jobLeases.claimNow(pass.name, owner, leaseUntil, startedAt);
  return claimed ? { name: pass.name, trigger: opts.trigger, fence: claimed.fence, slot, startedAt, leaseUntil } : null;
}

async function execute(deps: Deps, pass: JobPass, owner: string, run: ClaimedRun, signal?: AbortSignal): Promise<RunOutcome> {
  const { name, trigger, startedAt, slot } = run;
  let result: JobResult | null = null;
  let error: string | null = null;
  try {
    result = await pass.run(deps, { now: startedAt, slot, trigger, signal });
  } catch (e) {
    error = (e instanceof Error ? e.message : String(e)).slice(0, MAX_ERROR_LENGTH);
    deps.logger.error("job pass failed", { job: name, trigger, error: e });
  }
  const finishedAt = deps.clock.now();
  const record = {
    trigger,
    status: error === null ? "ok" : "error",
    ...(error === null ? { result } : { error }),
    duration_ms: finishedAt.getTime() - startedAt.getTime(),
  };
  const recorded = await deps.repos.jobLeases.finish(name, owner, run.fence, record, finishedAt);
  if (!recorded) deps.logger.warn("job pass outlived its lease; result not recorded", { job: name, fence: run.fence });
  return { name, trigger, status: error === null ? "ok" : "error", fence: run.fence, slot, startedAt, finishedAt, result, error, recorded };
}

/**
 * Claims the pass (for `slot` on schedule, "now" for an admin run), runs it and records its result.
 * Null when the claim was refused: another node holds the lease, or (scheduled) already ran this slot.
 */
export async function runPass(deps: Deps, name: string, opts: RunOptions): Promise<RunOutcome | null> {
  const pass = findPass(name, opts.passes);
  const owner = opts.owner ?? NODE_ID;
  const run = await claimPass(deps, pass, owner, opts);
  return run ? execute(deps, pass, owner, run, opts.signal) : null;
}

/** Runs started in the background (startPass), per deps, so shutdown can stop them before the database closes. */
const background = new WeakMap<Deps, Set<{ abort: AbortController; done: Promise<unknown> }>>();

/**
 * Claims the pass "now" (as an admin run) and runs it in the background: returns as soon as the claim
 * is taken (null when another run holds the lease), with `done` settling when the run is recorded.
 * An HTTP request that waited for a long pass would outlive the server's idle timeout, and its
 * client's retry would start a second pass (POST /admin/system/run-expiry-checks answers 202 instead).
 */
export async function startPass(deps: Deps, name: string, opts: RunOptions): Promise<{ run: ClaimedRun; done: Promise<RunOutcome | null> } | null> {
  const pass = findPass(name, opts.passes);
  const owner = opts.owner ?? NODE_ID;
  const run = await claimPass(deps, pass, owner, opts);
  if (!run) return null;
  const abort = new AbortController();
  const runs = background.get(deps) ?? new Set();
  background.set(deps, runs);
  // execute() records a failing pass itself; it rejects only when the record cannot be written.
  const done = execute(deps, pass, owner, run, abort.signal).catch((e: unknown) => {
    deps.logger.error("job pass could not be recorded", { job: name, fence: run.fence, error: e });
    return null;
  });
  const entry = { abort, done };
  runs.add(entry);
  void done.then(() => runs.delete(entry));
  return { run, done };
}

/**
 * Stops this process's background runs at their next page and waits for them (before the database
 * closes). An aborted run records an error; its lease is released, and the next run starts over.
 */
export async function stopBackgroundRuns(deps: Deps): Promise<void> {
  const runs = [...(background.get(deps) ?? [])];
  for (const r of runs) r.abort.abort(new Error("the node is shutting down"));
  await Promise.allSettled(runs.map((r) => r.done));
}
