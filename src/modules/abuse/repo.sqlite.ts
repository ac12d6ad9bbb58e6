import { and, eq, isNull, lt, or, sql } from "drizzle-orm";
import { lift, immediate, lazyStatement, type DbHandle } from "../../db/client";
import { bruteForceState } from "../../db/schema";
import type { BruteForceRepo, BruteForceState } from "./repo";

export function createBruteForceRepo(handle: DbHandle): BruteForceRepo {
  const { db } = handle;
  const byIp = lazyStatement(() => db.select().from(bruteForceState).where(eq(bruteForceState.ip, sql.placeholder("ip"))).prepare());
  const get = (ip: string): BruteForceState | null => byIp().get({ ip }) ?? null;
  const prune = (before: Date): number =>
    db
      .delete(bruteForceState)
      .where(and(lt(bruteForceState.updatedAt, before), or(isNull(bruteForceState.lockedUntil), lt(bruteForceState.lockedUntil, before))))
      .returning({ ip: bruteForceState.ip })
      .all().length;
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
        prune(pruneBefore);
        return next;
      });
    },
    prune: lift(prune),
  };
}
