import { and, eq, isNull, lt, or, sql } from "drizzle-orm";
import type { PgHandle, PgExecutor } from "../../db/pg";
import { bruteForceState } from "../../db/schema-pg";
import { RECORD_PRUNE_BATCH, type BruteForceRepo, type BruteForceState } from "./repo";

/**
 * Deletes rows idle since `before` and not locked past it. SKIP LOCKED: a row another transaction
 * holds is being written right now (so it is not idle), and two pruning statements never wait on
 * each other's rows (which could deadlock when they lock them in different orders).
 */
async function pruneIdle(tx: PgExecutor, before: Date, limit: number): Promise<number> {
  if (limit <= 0) return 0;
  const idle = tx
    .select({ ip: bruteForceState.ip })
    .from(bruteForceState)
    .where(and(lt(bruteForceState.updatedAt, before), or(isNull(bruteForceState.lockedUntil), lt(bruteForceState.lockedUntil, before))))
    .limit(limit)
    .for("update", { skipLocked: true });
  const gone = await tx.delete(bruteForceState).where(sql`${bruteForceState.ip} IN (${idle})`).returning({ ip: bruteForceState.ip });
  return gone.length;
}

/** Values of the row recordFailure inserts to hold the lock on a new address; always overwritten before commit. */
const PLACEHOLDER = { fails: 0, windowStartedAt: new Date(0), level: 0, lockedUntil: null, updatedAt: new Date(0) };

/** How often recordFailure starts over when the address's row vanished between two statements (a prune). */
const LOCK_ATTEMPTS = 5;

export function createBruteForceRepoPg(handle: PgHandle): BruteForceRepo {
  const { db } = handle;
  // Read by every activation (the lockout check): built once, prepared on the server.
  let byIp: ReturnType<typeof prepareByIp> | undefined;
  const prepareByIp = () => db.select().from(bruteForceState).where(eq(bruteForceState.ip, sql.placeholder("ip"))).prepare("brute_force_by_ip");
  return {
    async get(ip) {
      byIp ??= prepareByIp();
      const [row] = await byIp.execute({ ip });
      return row ?? null;
    },
    async recordFailure(ip, decide, pruneBefore) {
      return db.transaction(async (tx) => {
        // Lock the address's row before deciding, so `decide` sees every committed failure (also from
        // other nodes) exactly once. A new address gets a placeholder row, whose insert is the lock:
        // a concurrent insert of the same address waits for this transaction, then conflicts.
        let current: BruteForceState | null | undefined;
        for (let attempt = 0; attempt < LOCK_ATTEMPTS && current === undefined; attempt++) {
          const inserted = await tx
            .insert(bruteForceState)
            .values({ ip, ...PLACEHOLDER })
            .onConflictDoNothing()
            .returning({ ip: bruteForceState.ip });
          if (inserted.length === 1) current = null;
          else [current] = await tx.select().from(bruteForceState).where(eq(bruteForceState.ip, ip)).for("update");
        }
        if (current === undefined) throw new Error(`Brute-force state of one address kept vanishing (${LOCK_ATTEMPTS} attempts).`);
        const next = decide(current);
        await tx
          .insert(bruteForceState)
          .values(next)
          .onConflictDoUpdate({
            target: bruteForceState.ip,
            set: {
              fails: next.fails,
              windowStartedAt: next.windowStartedAt,
              level: next.level,
              lockedUntil: next.lockedUntil,
              updatedAt: next.updatedAt,
            },
          });
        // Forget addresses that have been quiet long enough (bounded table under scanning).
        await pruneIdle(tx, pruneBefore, RECORD_PRUNE_BATCH);
        return next;
      });
    },
    prune: (before, limit) => pruneIdle(db, before, limit),
  };
}
