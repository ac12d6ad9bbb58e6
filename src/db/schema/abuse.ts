import { table, text, integer, index, primaryKey, ts, bigint } from "../dialect/sqlite";

/**
 * Brute-force state per client address (DECISIONS: Abuse limits). In SQLite, not in memory, so every
 * node sharing the database enforces the same lockout.
 */
export const bruteForceState = table(
  "brute_force_state",
  {
    ip: text("ip").primaryKey(),
    /** Failed lookups in the current window. */
    fails: integer("fails").notNull(),
    windowStartedAt: ts("window_started_at").notNull(),
    /** Lockouts so far (the next one lasts base × 2^level, capped). */
    level: integer("level").notNull(),
    lockedUntil: ts("locked_until"),
    updatedAt: ts("updated_at").notNull(),
  },
  (t) => [index("brute_force_state_updated_idx").on(t.updatedAt)],
);

/**
 * Public rate-limit counters per key and window (DECISIONS: Abuse limits — "limiter state must be
 * shared by all nodes when the DB is shared"). Each node adds its hits here in batches and reads the
 * totals back (modules/abuse/rate-limit.sqlite.ts); window_start is in ms.
 */
export const rateLimitCounters = table(
  "rate_limit_counters",
  {
    key: text("key").notNull(),
    windowStart: bigint("window_start").notNull(),
    count: integer("count").notNull(),
  },
  (t) => [primaryKey({ columns: [t.key, t.windowStart] }), index("rate_limit_counters_window_idx").on(t.windowStart)],
);
