// Domain → wire for the job admin routes.
import { iso } from "../shared/clock";
import { sortedKeys } from "../shared/json";
import type { JobRunState, JobStatus } from "./service";
import type { RunOutcome } from "./runner";
import type { JobResult } from "./passes";

/** The stored last_result (written by runner.ts), re-shaped field by field, never spread. */
function presentLastResult(r: Record<string, unknown> | null) {
  if (!r) return null;
  return {
    trigger: r.trigger === "admin" ? ("admin" as const) : r.trigger === "nudge" ? ("nudge" as const) : ("schedule" as const),
    status: r.status === "ok" ? ("ok" as const) : ("error" as const),
    result: r.result && typeof r.result === "object" ? (sortedKeys(r.result) as JobResult) : null,
    error: typeof r.error === "string" ? r.error : null,
    duration_ms: typeof r.duration_ms === "number" ? Math.round(r.duration_ms) : 0,
  };
}

export function presentJobStatus({ pass, lease, running }: JobStatus) {
  return {
    name: pass.name,
    description: pass.description,
    schedule: pass.schedule,
    running,
    lease_owner: lease?.owner ?? null,
    lease_until: iso(lease?.leaseUntil),
    fence: lease?.fence ?? 0,
    last_slot_at: iso(lease?.lastSlotAt),
    last_started_at: iso(lease?.lastStartedAt),
    last_finished_at: iso(lease?.lastFinishedAt),
    last_result: presentLastResult(lease?.lastResult ?? null),
  };
}

export function presentJobRun(o: RunOutcome) {
  return {
    name: o.name,
    trigger: o.trigger,
    status: o.status,
    fence: o.fence,
    started_at: o.startedAt.toISOString(),
    finished_at: o.finishedAt.toISOString(),
    result: o.result,
    error: o.error,
    recorded: o.recorded,
  };
}

export function presentJobRunState(r: JobRunState) {
  return {
    name: r.name,
    fence: r.fence,
    status: r.status,
    started_at: iso(r.startedAt),
    lease_until: iso(r.leaseUntil),
    finished_at: iso(r.finishedAt),
    result: r.result ? (sortedKeys(r.result) as JobResult) : null,
    error: r.error,
  };
}
