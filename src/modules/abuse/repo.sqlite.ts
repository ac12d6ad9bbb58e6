import { and, eq, inArray, isNull, lt, or, sql } from "drizzle-orm";
import { lift, immediate, lazyStatement, type DbHandle } from "../../db/client";
import { bruteForceState } from "../../db/schema";
import { RECORD_PRUNE_BATCH, type BruteForceRepo, type BruteForceState } from "./repo";

export function createBruteForceRepo(handle: DbHandle): BruteForceRepo {
  const { db } = handle;
  const byIp = lazyStatement(() => db.select().from(bruteForceState).where(eq(bruteForceState.ip, sql.placeholder("ip"))).prepare());
  const get = (ip: string): BruteForceState | null => byIp().get({ ip }) ?? null;
  const prune = (before: Date, limit: number): number => {
    if (limit <= 0) return 0;
    const idle = db
      .select({ ip: bruteForceState.ip })
      .from(bruteForceState)
      .where(and(lt(bruteForceState.updatedAt, before), or(isNull(bruteForceState.lockedUntil), lt(bruteForceState.lockedUntil, before))))
      .limit(limit);
    return db.delete(bruteForceState).where(inArray(bruteForceState.ip, idle)).returning({ ip: bruteForceState.ip }).all().length;
  };
  return {
    get: lift(get),
    async recordFailure(ip, decide, pruneBefore) {
      return immediate(handle, () => {
        const next = decide(get(ip));
        db.insert(bruteForceState)
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
          })
          .run();
        // Forget addresses that have been quiet long enough (bounded table under scanning).
        prune(pruneBefore, RECORD_PRUNE_BATCH);
        return next;
      });
    },
    prune: async (before, limit) => prune(before, limit),
  };
}
