// The public rate limiter, shared by every node on one database (DECISIONS: Abuse limits — "limiter
// state must be shared by all nodes when the DB is shared"). A write per request would put every
// verify (the hot path) behind SQLite's single writer, so hits are counted in memory and added to
// rate_limit_counters in one transaction per SHARED_FLUSH_INTERVAL_MS; each flush reads the totals
// back. A key met for the first time, in a new window, or last read more than an interval ago is read
// from the database at once, so a node decides on the other nodes' hits as of at most two intervals
// ago (their flush, then its read) plus its own. The sliding-window rule itself is
// shared with the in-process limiter (shared/rate-limiter.ts).
import { and, eq, lt, sql } from "drizzle-orm";
import { immediate, lazyStatement, writeUnlessLocked, type DbHandle } from "../../db/client";
import { rateLimitCounters } from "../../db/schema";
import { slidingWindowDecision, type RateLimiter } from "../../shared/rate-limiter";

/** How often a node writes its counts and reads the others' (also: the most another node lags). */
export const SHARED_FLUSH_INTERVAL_MS = 1000;

export interface SharedRateLimiter extends RateLimiter {
  /** Writes this node's pending hits and refreshes the totals now (also runs on a timer). */
  flush(): void;
}

interface Entry {
  start: number;
  windowMs: number;
  /** Totals of all nodes as last read: the current and the previous window (own flushed hits included). */
  current: number;
  previous: number;
  /** When `current`/`previous` were last read (clock ms). */
  readAtMs: number;
  lastHitMs: number;
  /** This node's unflushed hits of window `start` (the same object as in `pending`), if any. */
  own: Pending | null;
}

interface Pending {
  key: string;
  start: number;
  n: number;
}

export function createSqliteRateLimiter(handle: DbHandle, opts: { flushIntervalMs?: number; maxKeys?: number } = {}): SharedRateLimiter {
  const { db } = handle;
  const flushIntervalMs = opts.flushIntervalMs ?? SHARED_FLUSH_INTERVAL_MS;
  const maxKeys = opts.maxKeys ?? 200_000;
  // Prepared on first use, like the repositories' statements: not part of every start.
  const readStmt = lazyStatement(() =>
    db
      .select({ count: rateLimitCounters.count })
      .from(rateLimitCounters)
      .where(and(eq(rateLimitCounters.key, sql.placeholder("key")), eq(rateLimitCounters.windowStart, sql.placeholder("start"))))
      .prepare(),
  );
  const addStmt = lazyStatement(() =>
    db
      .insert(rateLimitCounters)
      .values({ key: sql.placeholder("key"), windowStart: sql.placeholder("start"), count: sql.placeholder("n") })
      .onConflictDoUpdate({
        target: [rateLimitCounters.key, rateLimitCounters.windowStart],
        set: { count: sql`${rateLimitCounters.count} + excluded.count` },
      })
      .prepare(),
  );
  const pruneStmt = lazyStatement(() => db.delete(rateLimitCounters).where(lt(rateLimitCounters.windowStart, sql.placeholder("before"))).prepare());

  const entries = new Map<string, Entry>();
  /** This node's hits not yet written, by `${start}|${key}`. */
  const pending = new Map<string, Pending>();
  let timer: ReturnType<typeof setTimeout> | null = null;
  let latestMs = 0;
  let longestWindowMs = 0;

  const stored = (key: string, start: number) => readStmt().get({ key, start })?.count ?? 0;
  const own = (key: string, start: number) => pending.get(`${start}|${key}`)?.n ?? 0;

  const load = (key: string, start: number, windowMs: number, nowMs: number): Entry => ({
    start,
    windowMs,
    current: stored(key, start),
    // Own unflushed hits of the previous window count too (they are not in the table yet).
    previous: stored(key, start - windowMs) + own(key, start - windowMs),
    readAtMs: nowMs,
    lastHitMs: nowMs,
    own: pending.get(`${start}|${key}`) ?? null,
  });

  const forgetIdle = (nowMs: number) => {
    for (const [k, e] of entries) if (nowMs - e.lastHitMs >= 2 * e.windowMs) entries.delete(k);
    // Still too many (an address-spraying flood): drop the oldest insertions; they are re-read on demand.
    let excess = entries.size - maxKeys;
    for (const k of entries.keys()) {
      if (excess-- <= 0) break;
      entries.delete(k);
    }
  };

  const flush = () => {
    if (timer) {
      clearTimeout(timer);
      timer = null;
    }
    if (pending.size === 0) return;
    // Repository transactions are synchronous, so a timer finds the connection in a transaction only
    // while a DataStore.transaction is open: the counts would become part of it. Try again later.
    let inTransaction = false;
    try {
      inTransaction = handle.sqlite.inTransaction;
    } catch {
      // Closed: the write below fails too and is handled there.
    }
    if (inTransaction) {
      schedule();
      return;
    }
    const batch = [...pending.values()];
    let locked = false;
    try {
      // Not while another process holds the write lock: bun:sqlite would wait for it synchronously,
      // stalling every request of this process; the hits stay pending for the next flush instead.
      locked = !writeUnlessLocked(handle.sqlite, () =>
        immediate(handle, () => {
          for (const p of batch) addStmt().run({ key: p.key, start: p.start, n: p.n });
          for (const key of new Set(batch.map((p) => p.key))) {
            const e = entries.get(key);
            if (!e) continue;
            e.current = stored(key, e.start);
            e.previous = stored(key, e.start - e.windowMs);
            e.readAtMs = latestMs;
          }
          // Counters older than two windows weigh nothing any more.
          pruneStmt().run({ before: latestMs - 2 * longestWindowMs });
        }),
      );
    } catch {
      // The database is closed (shutdown) or failed otherwise. Every decision here was already
      // taken; only the other nodes miss these hits.
    }
    if (locked) {
      schedule();
      return;
    }
    // The batch is in the table now (and in the totals just read): no longer this node's own.
    pending.clear();
    for (const p of batch) {
      const e = entries.get(p.key);
      if (e?.own === p) e.own = null;
    }
  };

  const schedule = () => {
    if (timer) return;
    timer = setTimeout(flush, flushIntervalMs);
    // Never keeps a stopping process alive.
    (timer as { unref?: () => void }).unref?.();
  };

  return {
    // The hot path of every public request: one map lookup while the entry is fresh; the pending
    // count of the entry's window is held by the entry itself.
    hit(key, limit, windowMs, nowMs) {
      if (nowMs > latestMs) latestMs = nowMs;
      if (windowMs > longestWindowMs) longestWindowMs = windowMs;
      const start = nowMs - (nowMs % windowMs);
      let e = entries.get(key);
      if (!e || e.windowMs !== windowMs || e.start !== start || nowMs - e.readAtMs >= flushIntervalMs) {
        if (!e && entries.size >= maxKeys) forgetIdle(nowMs);
        e = load(key, start, windowMs, nowMs);
        entries.set(key, e);
      }
      e.lastHitMs = nowMs;
      const decision = slidingWindowDecision(e.previous, e.current + (e.own?.n ?? 0), start, nowMs, limit, windowMs);
      if (decision.allowed) {
        if (e.own) e.own.n += 1;
        else {
          e.own = { key, start, n: 1 };
          pending.set(`${start}|${key}`, e.own);
        }
        schedule();
      }
      return decision;
    },
    async prune(beforeMs, limit) {
      if (limit <= 0) return 0;
      const old = db.select({ key: rateLimitCounters.key, start: rateLimitCounters.windowStart }).from(rateLimitCounters).where(lt(rateLimitCounters.windowStart, beforeMs)).limit(limit);
      return db
        .delete(rateLimitCounters)
        .where(sql`(${rateLimitCounters.key}, ${rateLimitCounters.windowStart}) IN (${old})`)
        .returning({ key: rateLimitCounters.key })
        .all().length;
    },
    flush,
  };
}
