// Long deletes in bounded batches (issue 26): each batch is one short statement (on SQLite one short
// write transaction, so another writer waits a batch at most), the loop yields between batches so
// this node's requests run in between (bun:sqlite runs a statement synchronously), and a run stops
// after a fixed number of batches; a larger backlog is worked off by the next runs. Used by every
// pruning pass (prune-history, prune-sessions, prune-abuse, prune-idempotency, expire-floating).

import { yieldToEventLoop } from "./slices";

/** Rows per delete statement. */
export const PRUNE_BATCH = 1000;
/** Batches per table and run: at most PRUNE_BATCH × PRUNE_MAX_BATCHES rows of each table per run. */
export const PRUNE_MAX_BATCHES = 50;

export interface PruneLimits {
  /** Rows per delete statement. */
  batch: number;
  /** Batches per table and run. */
  maxBatches: number;
}

/** The bounds of every pruning pass (prune-history, prune-sessions, prune-abuse, prune-idempotency, expire-floating). */
export const PRUNE_LIMITS: PruneLimits = { batch: PRUNE_BATCH, maxBatches: PRUNE_MAX_BATCHES };

/** Calls `prune` until a batch deletes fewer than `limits.batch` rows or `limits.maxBatches` batches ran. */
export async function drain(limits: PruneLimits, prune: (limit: number) => Promise<number>): Promise<{ deleted: number; capped: boolean }> {
  let deleted = 0;
  for (let i = 0; i < limits.maxBatches; i++) {
    const n = await prune(limits.batch);
    deleted += n;
    if (n < limits.batch) return { deleted, capped: false };
    // bun:sqlite runs a statement synchronously: let this node's requests in between batches.
    await yieldToEventLoop();
  }
  return { deleted, capped: true };
}

