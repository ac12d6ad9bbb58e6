// Serialization failures and deadlocks on PostgreSQL: telling them apart, and running again a statement
// PostgreSQL aborted for one. (Rules over rows that may not exist yet take a named lock in their unit of
// work instead of a SERIALIZABLE transaction: db/dialect/query.ts lockKey.)
/** Serialization failure or deadlock: the transaction was rolled back and may simply run again. */
export function isRetryableConflict(e: unknown): boolean {
  let cur = e as { code?: string; cause?: unknown } | null | undefined;
  for (let i = 0; cur && typeof cur === "object" && i < 5; i++) {
    if (cur.code === "40001" || cur.code === "40P01") return true;
    cur = cur.cause as typeof cur;
  }
  return false;
}

/** Runs `run` again on a serialization failure or deadlock, up to `attempts` times in all. */
export async function retryConflicts<T>(run: () => Promise<T>, attempts: number): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await run();
    } catch (e) {
      if (attempt >= attempts || !isRetryableConflict(e)) throw e;
      // Randomised, growing backoff (capped at 100 ms) so the losers do not collide again in lockstep.
      await Bun.sleep(Math.random() * Math.min(100, 2 ** attempt));
    }
  }
}

/**
 * A single-statement write (no transaction of ours around it) under the database's own isolation.
 * Transactions set READ COMMITTED themselves (pg.ts), but an autocommit statement runs at the
 * server's default_transaction_isolation, and under REPEATABLE READ or SERIALIZABLE two of them
 * updating one row fail with 40001 where READ COMMITTED waits and goes on.
 *   "skip": a best-effort timestamp (last seen, last used): another writer just wrote the row, so
 *           this write is dropped (it would have written the same moment).
 *   "retry": the statement runs again (a fresh snapshot sees the other's commit), with the same
 *           randomised, growing backoff as retryConflicts, up to 20 times.
 */
export async function autocommitWrite<T>(run: () => Promise<T>, onConflict: "skip" | "retry"): Promise<T | undefined> {
  if (onConflict === "retry") return await retryConflicts(run, 20);
  try {
    return await run();
  } catch (e) {
    if (isRetryableConflict(e)) return undefined;
    throw e;
  }
}
