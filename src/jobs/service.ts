// Admin verbs over the job passes: the status view and "run now". System-wide, admin scope only.
import type { Deps } from "../deps";
import { assertSystemWide, type Actor } from "../shared/actor";
import { AppError } from "../shared/errors";
import type { JobLease } from "./lease";
import { JOB_PASSES, type JobPass } from "./passes";
import { findPass, runPass, type RunOutcome } from "./runner";

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
