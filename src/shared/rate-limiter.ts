// Sliding-window counter (the previous window's count weighted by its remaining overlap), per key.
// The decision is pure (slidingWindowDecision); the counting lives in the SQLite-backed limiter
// (modules/abuse/rate-limit.sqlite.ts), whose state every node sharing the database sees
// (DECISIONS: Abuse limits).
import { MINUTE } from "./clock";

/**
 * The window of every limit in use (public routes: per minute; spec: invite accept 60/min). The
 * prune-abuse job drops counters older than two of them: they no longer weigh in any decision.
 */
export const RATE_LIMIT_WINDOW_MS = MINUTE;

export interface RateDecision {
  allowed: boolean;
  /** Seconds until a request would be allowed again (0 when allowed). */
  retryAfterSeconds: number;
}

export interface RateLimiter {
  /** A decision taken without I/O may be returned directly (the SQLite limiter counts in memory). */
  hit(key: string, limit: number, windowMs: number, nowMs: number): RateDecision | Promise<RateDecision>;
  /**
   * Deletes up to `limit` counters of windows that started before `beforeMs`, in one short statement
   * (one batch of the prune-abuse pass); returns how many.
   */
  prune(beforeMs: number, limit: number): Promise<number>;
}

/** The one "allowed" decision, shared (frozen): a limiter decides on every public request. */
const ALLOWED: RateDecision = Object.freeze({ allowed: true, retryAfterSeconds: 0 });

/**
 * The sliding-window rule: `previous` hits of the window before `start`, weighted by how much of it
 * still overlaps the last `windowMs`, plus the `current` window's hits, must leave room for one more.
 */
export function slidingWindowDecision(previous: number, current: number, start: number, nowMs: number, limit: number, windowMs: number): RateDecision {
  const overlap = 1 - (nowMs - start) / windowMs;
  const estimate = previous * overlap + current;
  if (estimate + 1 > limit) {
    // Time until the weighted previous window has decayed enough for one more request.
    const needed = estimate + 1 - limit;
    const wait = previous > 0 && needed <= previous * overlap ? (needed / previous) * windowMs : windowMs - (nowMs - start);
    return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(wait / 1000)) };
  }
  return ALLOWED;
}
