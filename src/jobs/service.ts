// Admin verbs over the job passes: the status view and "run now". System-wide, admin scope only.
import type { Deps } from "../deps";
import { assertSystemWide, type Actor } from "../shared/actor";
import { AppError } from "../shared/errors";
import type { JobLease } from "./lease";
import { JOB_PASSES, type JobPass } from "./passes";
import { findPass, runPass, startPass, type RunOutcome } from "./runner";
import type { JobResult } from "./passes";

export interface JobStatus {
  pass: JobPass;
  /** Null when the pass never ran on this database. */
  lease: JobLease | null;
  /** A run holds an unexpired lease at `now`. */
  running: boolean;
}

export async function listJobs(deps: Deps, actor: Actor, passes: readonly JobPass[] = JOB_PASSES): Promise<JobStatus[]> {
  assertSystemWide(actor);
  const leases = new Map((await deps.repos.jobLeases.list()).map((l) => [l.name, l]));
  const now = deps.clock.nowMs();
  return passes.map((pass) => {
    const lease = leases.get(pass.name) ?? null;
    const running = lease?.owner != null && lease.leaseUntil !== null && lease.leaseUntil.getTime() > now;
    return { pass, lease, running };
  });
}

/** Runs a pass now on this node: 404 for an unknown name, 409 while another run holds its lease. */
export async function runJobNow(deps: Deps, actor: Actor, name: string, passes: readonly JobPass[] = JOB_PASSES): Promise<RunOutcome> {
  assertSystemWide(actor);
  findPass(name, passes);
  const outcome = await runPass(deps, name, { trigger: "admin", passes });
  if (!outcome) {
    throw new AppError("CONFLICT", { message: `Job pass "${name}" is running on another node; retry when it has finished.`, details: { job: name } });
  }
  return outcome;
}

/** One run of a job as the lease row tells it (GET /admin/system/jobs/{name}/runs/{fence}). */
export interface JobRunState {
  name: string;
  fence: number;
  status: "running" | "ok" | "error" | "abandoned";
  startedAt: Date | null;
  leaseUntil: Date | null;
  finishedAt: Date | null;
  result: JobResult | null;
  error: string | null;
}

/**
 * The run `fence` of `name` from the job's lease row, which holds its latest claim and the result of
 * its latest finished run: 404 for any other fence (a later run replaced its record, or none such).
 */
function runState(lease: JobLease, fence: number, now: number): JobRunState | null {
  if (lease.fence !== fence) return null;
  const base = { name: lease.name, fence, startedAt: lease.lastStartedAt, result: null, error: null };
  if (lease.owner !== null) {
    const live = lease.leaseUntil !== null && lease.leaseUntil.getTime() > now;
    return { ...base, status: live ? "running" : "abandoned", leaseUntil: lease.leaseUntil, finishedAt: null };
  }
  const r = lease.lastResult ?? {};
  const ok = r.status === "ok";
  return {
    ...base,
    status: ok ? "ok" : "error",
    leaseUntil: null,
    finishedAt: lease.lastFinishedAt,
    result: ok && r.result && typeof r.result === "object" ? (r.result as JobResult) : null,
    error: ok ? null : typeof r.error === "string" ? r.error : null,
  };
}

async function leaseOf(deps: Deps, name: string): Promise<JobLease | null> {
  return (await deps.repos.jobLeases.list()).find((l) => l.name === name) ?? null;
}

/**
 * Starts a pass in the background on this node and answers at once (POST /admin/system/run-expiry-
 * checks: 202). While a run of it holds the lease (this node's or another's, scheduled or started
 * here), that run is returned instead of starting a second one, so a client that retries after a
 * timeout gets the run it started to poll, never a second pass beside it.
 */
export async function startJobRun(deps: Deps, actor: Actor, name: string, passes: readonly JobPass[] = JOB_PASSES): Promise<JobRunState> {
  assertSystemWide(actor);
  findPass(name, passes);
  // A lease freed between a refused claim and the read of the holder: claim again (twice at most).
  for (let attempt = 0; attempt < 3; attempt++) {
    const started = await startPass(deps, name, { trigger: "admin", passes });
    if (started) {
      const { run } = started;
      return { name, fence: run.fence, status: "running", startedAt: run.startedAt, leaseUntil: run.leaseUntil, finishedAt: null, result: null, error: null };
    }
    const lease = await leaseOf(deps, name);
    const state = lease ? runState(lease, lease.fence, deps.clock.nowMs()) : null;
    if (state?.status === "running") return state;
  }
  throw new AppError("CONFLICT", { message: `Job pass "${name}" could not be started; retry.`, details: { job: name } });
}

/** A run of a job by its fence: running, finished (ok with its counts, or error) or abandoned. */
export async function getJobRun(deps: Deps, actor: Actor, name: string, fence: number, passes: readonly JobPass[] = JOB_PASSES): Promise<JobRunState> {
  assertSystemWide(actor);
  findPass(name, passes);
  const lease = await leaseOf(deps, name);
  const state = lease ? runState(lease, fence, deps.clock.nowMs()) : null;
  if (!state) {
    throw new AppError("NOT_FOUND", {
      message: `Job pass "${name}" has no run ${fence} on record (only the latest run is kept).`,
      details: { job: name, fence },
    });
  }
  return state;
}
