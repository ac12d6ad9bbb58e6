// The public rate limiter on PostgreSQL: exact across nodes. Each hit is ONE statement that reads the
// previous window's count and, only if the sliding-window estimate leaves room, adds the hit to the
// current window's counter (an INSERT … ON CONFLICT DO UPDATE … WHERE, evaluated on the latest row
// version under its row lock). Of N concurrent hits at the limit, exactly as many as fit are counted
// and allowed, whichever node they reach. Refused hits are not counted (as on SQLite). The rule itself
// is shared/rate-limiter.ts's slidingWindowDecision.
import type { PgHandle } from "../../db/pg";
import { slidingWindowDecision, type RateLimiter } from "../../shared/rate-limiter";

interface HitRow {
  previous: number;
  /** The current window's count after this hit; null when the hit was refused (not counted). */
  counted: number | null;
  /** The current window's count as of the statement's snapshot (for Retry-After when refused). */
  current: number;
}

export function createPgRateLimiter(handle: PgHandle): RateLimiter {
  const { sql } = handle;
  return {
    async hit(key, limit, windowMs, nowMs) {
      const start = nowMs - (nowMs % windowMs);
      // The same weight slidingWindowDecision computes; the SQL repeats its float arithmetic
      // (previous × overlap + current, then + 1 against the limit) in float8, i.e. IEEE doubles.
      const overlap = 1 - (nowMs - start) / windowMs;
      const [row] = await sql<HitRow[]>`
        WITH p AS (
          SELECT coalesce((SELECT count FROM rate_limit_counters WHERE key = ${key} AND window_start = ${start - windowMs}), 0) AS n
        ), up AS (
          INSERT INTO rate_limit_counters AS c (key, window_start, count)
          SELECT ${key}, ${start}, 1 FROM p WHERE p.n::float8 * ${overlap}::float8 + 0::float8 + 1 <= ${limit}::float8
          ON CONFLICT (key, window_start) DO UPDATE SET count = c.count + 1
            WHERE (SELECT n FROM p)::float8 * ${overlap}::float8 + c.count::float8 + 1 <= ${limit}::float8
          RETURNING c.count
        )
        SELECT (SELECT n FROM p) AS previous, (SELECT count FROM up) AS counted,
               coalesce((SELECT count FROM rate_limit_counters WHERE key = ${key} AND window_start = ${start}), 0) AS current`;
      const { previous, counted } = row!;
      if (counted !== null) return { allowed: true, retryAfterSeconds: 0 };
      let decision = slidingWindowDecision(previous, row!.current, start, nowMs, limit, windowMs);
      if (decision.allowed) {
        // The snapshot lagged hits committed while this statement waited for the counter's row lock
        // (those hits are why it was refused): read the counter again for the Retry-After.
        const [fresh] = await sql<{ count: number }[]>`
          SELECT count FROM rate_limit_counters WHERE key = ${key} AND window_start = ${start}`;
        decision = slidingWindowDecision(previous, fresh?.count ?? 0, start, nowMs, limit, windowMs);
        if (decision.allowed) decision = { allowed: false, retryAfterSeconds: 1 };
      }
      return decision;
    },
    async prune(beforeMs) {
      const gone = await sql`DELETE FROM rate_limit_counters WHERE window_start < ${beforeMs} RETURNING key`;
      return gone.length;
    },
  };
}
