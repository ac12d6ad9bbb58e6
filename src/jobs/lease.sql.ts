// JobLeaseRepo on both engines, written once against the query seam (db/dialect/query.ts). Each claim
// is one INSERT … ON CONFLICT DO UPDATE … WHERE … RETURNING: SQLite runs it under its one write lock;
// PostgreSQL locks the conflicting row and evaluates the WHERE on its latest committed version. So of
// several processes or nodes racing for one slot exactly one gets a row back (no advisory locks: DECISIONS).
import { and, eq, isNull, lt, lte, or, sql } from "drizzle-orm";
import type { QueryDialect } from "../db/dialect/query";
import type { JobLease, JobLeaseRepo } from "./lease";

/**
 * A claim as one upsert: the row to insert when the pass was never claimed, and the update with the
 * condition under which it applies (the lease free or expired at `now`, and for a scheduled slot no
 * later slot claimed before).
 */
function claimUpsert(t: QueryDialect["tables"]["jobLeases"], name: string, owner: string, slot: Date | null, leaseUntil: Date, now: Date) {
  const free = or(isNull(t.leaseUntil), lte(t.leaseUntil, now));
  return {
    values: { name, owner, leaseUntil, fence: 1, lastSlotAt: slot, lastStartedAt: now },
    set: { owner, leaseUntil, fence: sql`${t.fence} + 1`, ...(slot ? { lastSlotAt: slot } : {}), lastStartedAt: now },
    setWhere: (slot ? and(free, or(isNull(t.lastSlotAt), lt(t.lastSlotAt, slot))) : free)!,
  };
}

export function createJobLeaseRepo(d: QueryDialect): JobLeaseRepo {
  const { db } = d;
  const { jobLeases } = d.tables;
  const upsert = async (name: string, owner: string, slot: Date | null, leaseUntil: Date, now: Date) => {
    const claim = claimUpsert(jobLeases, name, owner, slot, leaseUntil, now);
    // Nodes race for a slot's lease at the same moment: under a stricter default isolation the
    // losers' upserts fail with 40001, and run again they see the winner's row and lose.
    const [row] = await d.retriedWrite(() =>
      db
        .insert(jobLeases)
        .values(claim.values)
        .onConflictDoUpdate({ target: jobLeases.name, set: claim.set, setWhere: claim.setWhere })
        .returning({ fence: jobLeases.fence }),
    );
    return row ? { fence: row.fence } : null;
  };
  return {
    claim: (name, owner, slot, leaseUntil, now) => upsert(name, owner, slot, leaseUntil, now),
    claimNow: (name, owner, leaseUntil, now) => upsert(name, owner, null, leaseUntil, now),
    async finish(name, owner, fence, result, now) {
      const done = await d.retriedWrite(() =>
        db
          .update(jobLeases)
          .set({ owner: null, leaseUntil: null, lastFinishedAt: now, lastResult: result })
          .where(and(eq(jobLeases.name, name), eq(jobLeases.owner, owner), eq(jobLeases.fence, fence)))
          .returning({ name: jobLeases.name }),
      );
      return done.length === 1;
    },
    async list() {
      // Byte order on both engines.
      return (await db.select().from(jobLeases).orderBy(d.byteOrder(jobLeases.name))) as JobLease[];
    },
  };
}
