// Sliding-window counter (the previous window's count weighted by its remaining overlap), per key.
// The decision is pure (slidingWindowDecision). This in-process implementation serves one process;
// the service itself uses the SQLite-backed one (modules/abuse/rate-limit.sqlite.ts), whose state
// every node sharing the database sees (DECISIONS: Abuse limits).
export interface RateDecision {
  allowed: boolean;
  /** Seconds until a request would be allowed again (0 when allowed). */
  retryAfterSeconds: number;
}

export interface RateLimiter {
  hit(key: string, limit: number, windowMs: number, nowMs: number): RateDecision;
}

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
  return { allowed: true, retryAfterSeconds: 0 };
}

interface Window {
  start: number;
  count: number;
  previous: number;
}

export function createMemoryRateLimiter(maxKeys = 200_000): RateLimiter {
  const windows = new Map<string, Window>();

  const prune = (nowMs: number, windowMs: number) => {
    // Entries idle for two windows carry no weight any more.
    for (const [k, w] of windows) if (nowMs - w.start >= 2 * windowMs) windows.delete(k);
    // Still too many (an address-spraying flood): drop the oldest insertions.
    if (windows.size > maxKeys) {
      let excess = windows.size - maxKeys;
      for (const k of windows.keys()) {
        if (excess-- <= 0) break;
        windows.delete(k);
      }
    }
  };

  return {
    hit(key, limit, windowMs, nowMs) {
      const start = nowMs - (nowMs % windowMs);
      let w = windows.get(key);
      if (!w) {
        if (windows.size >= maxKeys) prune(nowMs, windowMs);
        w = { start, count: 0, previous: 0 };
        windows.set(key, w);
      } else if (w.start !== start) {
        w.previous = start - w.start === windowMs ? w.count : 0;
        w.start = start;
        w.count = 0;
      }
      const decision = slidingWindowDecision(w.previous, w.count, start, nowMs, limit, windowMs);
      if (decision.allowed) w.count += 1;
      return decision;
    },
  };
}
