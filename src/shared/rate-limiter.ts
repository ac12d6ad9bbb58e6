// Sliding-window counter (the previous window's count weighted by its remaining overlap), per key.
// In-process: the embedded SQLite deployment is a single node. A multi-node backend supplies a shared
// implementation of the same interface.
export interface RateDecision {
  allowed: boolean;
  /** Seconds until a request would be allowed again (0 when allowed). */
  retryAfterSeconds: number;
}

export interface RateLimiter {
  hit(key: string, limit: number, windowMs: number, nowMs: number): RateDecision;
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
      const overlap = 1 - (nowMs - start) / windowMs;
      const estimate = w.previous * overlap + w.count;
      if (estimate + 1 > limit) {
        // Time until the weighted previous window has decayed enough for one more request.
        const needed = estimate + 1 - limit;
        const wait = w.previous > 0 && needed <= w.previous * overlap ? (needed / w.previous) * windowMs : windowMs - (nowMs - start);
        return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(wait / 1000)) };
      }
      w.count += 1;
      return { allowed: true, retryAfterSeconds: 0 };
    },
  };
}
