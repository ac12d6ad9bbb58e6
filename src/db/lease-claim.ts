// A job lease claim (jobs/lease.ts) as one upsert, the same on both engines: lease.sqlite.ts and
// lease.pg.ts run it against their own drizzle table (the columns have the same names and meaning).
import { and, isNull, lt, lte, or, sql, type Column } from "drizzle-orm";

/** The job_leases columns a claim reads and writes, as either engine's drizzle table has them. */
interface LeaseColumns {
  leaseUntil: Column;
  lastSlotAt: Column;
  fence: Column;
}

/**
 * A claim as one upsert, the same on both engines (lease.sqlite.ts, lease.pg.ts): the row to insert
 * when the pass was never claimed, and the update with the condition under which it applies (the
 * lease free or expired at `now`, and for a scheduled slot no later slot claimed before).
 */
export function claimUpsert(t: LeaseColumns, name: string, owner: string, slot: Date | null, leaseUntil: Date, now: Date) {
  const free = or(isNull(t.leaseUntil), lte(t.leaseUntil, now));
  return {
    values: { name, owner, leaseUntil, fence: 1, lastSlotAt: slot, lastStartedAt: now },
    set: { owner, leaseUntil, fence: sql`${t.fence} + 1`, ...(slot ? { lastSlotAt: slot } : {}), lastStartedAt: now },
    setWhere: (slot ? and(free, or(isNull(t.lastSlotAt), lt(t.lastSlotAt, slot))) : free)!,
  };
}
