// SERIALIZABLE transactions with retry, for the few PostgreSQL writes whose decision rests on rows that
// may not exist yet, so there is no row to lock (first-start signing-key race, settings documents):
// PostgreSQL's serializable snapshot isolation aborts one of two transactions that read the same
// predicate and then write into it (SQLSTATE 40001), and the retry sees the winner's committed rows.
import { is } from "drizzle-orm";
import { PgTransaction } from "drizzle-orm/pg-core";
import type { PgDb } from "./pg";

type PgTx = Parameters<Parameters<PgDb["transaction"]>[0]>[0];

/** Serialization failure or deadlock: the transaction was rolled back and may simply run again. */
export function isRetryableConflict(e: unknown): boolean {
  let cur = e as { code?: string; cause?: unknown } | null | undefined;
  for (let i = 0; cur && typeof cur === "object" && i < 5; i++) {
    if (cur.code === "40001" || cur.code === "40P01") return true;
    cur = cur.cause as typeof cur;
  }
  return false;
}

/**
 * Runs `fn` in a SERIALIZABLE transaction, re-running it (a fresh transaction, so `fn` must only
 * touch the database and synchronous callbacks) when PostgreSQL aborts it for a serialization
 * conflict. Gives up after `attempts` tries, rethrowing the last conflict.
 */
export async function serializable<T>(db: PgDb, fn: (tx: PgTx) => Promise<T>, attempts = 20): Promise<T> {
  // Inside DataStore.transaction this would be a savepoint of a READ COMMITTED transaction: the
  // decision it protects would silently lose its guarantee. Refuse instead.
  if (is(db, PgTransaction)) throw new Error("this write needs its own SERIALIZABLE transaction and cannot run inside DataStore.transaction()");
  return await retryConflicts(() => db.transaction(fn, { isolationLevel: "serializable" }), attempts);
}

/** Runs `run` again on a serialization failure or deadlock, up to `attempts` times in all. */
async function retryConflicts<T>(run: () => Promise<T>, attempts: number): Promise<T> {
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
 *           randomised backoff as serializable(), up to 20 times.
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
