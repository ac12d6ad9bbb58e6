// Idempotency-Key rules shared by the HTTP middleware (src/http/idempotency.ts) and the job that
// prunes old keys (DECISIONS: Idempotency; spec: Limits).
import type { Deps } from "../../deps";
import { DAY, MINUTE } from "../../shared/clock";
import { drain, PRUNE_LIMITS } from "../../shared/batches";

export const IDEMPOTENCY_HEADER = "idempotency-key";
export const MAX_IDEMPOTENCY_KEY_LENGTH = 256;
/** Spec: Limits — replay window 24 hours; older rows are pruned. */
export const IDEMPOTENCY_WINDOW_MS = DAY;
/**
 * A claim is normally completed within milliseconds (a few indexed reads, one write transaction
 * and a signature). An in-flight claim older than this was left by a process that died mid-request;
 * it is taken over instead of answering 409 for a whole day. A takeover cannot apply an effect twice:
 * the original, should it still be running, finds its claim re-stamped when it stores its outcome
 * inside its effect's transaction, and that transaction rolls back.
 */
export const STALE_CLAIM_MS = MINUTE;

/**
 * Deletes keys older than the replay window (a claim also deletes a few); for a periodic job. In
 * batches of PRUNE_BATCH rows that yield in between, at most PRUNE_MAX_BATCHES a run.
 */
export async function pruneIdempotencyKeys(deps: Deps): Promise<number> {
  const before = new Date(deps.clock.nowMs() - IDEMPOTENCY_WINDOW_MS);
  return (await drain(PRUNE_LIMITS, (n) => deps.repos.idempotency.prune(before, n))).deleted;
}
