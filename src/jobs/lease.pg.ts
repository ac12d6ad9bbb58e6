// JobLeaseRepo on PostgreSQL: each claim is one INSERT … ON CONFLICT DO UPDATE … WHERE … RETURNING.
// The conflicting row is locked and the WHERE is evaluated on its latest committed version, so of
// several nodes racing for one slot exactly one gets a row back (no advisory locks: DECISIONS).
import { and, eq, sql } from "drizzle-orm";
import type { PgHandle } from "../db/pg";
import { autocommitWrite } from "../db/serializable.pg";
import { jobLeases } from "../db/schema-pg";
import type { JobLease, JobLeaseRepo } from "./lease";
import { claimUpsert } from "../db/lease-claim";

export function createJobLeaseRepoPg(handle: PgHandle): JobLeaseRepo {
  const { db } = handle;
  const upsert = async (name: string, owner: string, slot: Date | null, leaseUntil: Date, now: Date) => {
    const claim = claimUpsert(jobLeases, name, owner, slot, leaseUntil, now);
    // Nodes race for a slot's lease at the same moment: under a REPEATABLE READ or SERIALIZABLE
    // default the losers' upserts fail with 40001, and run again they see the winner's row and lose.
    const rows = await autocommitWrite(
      () =>
        db
          .insert(jobLeases)
          .values(claim.values)
          .onConflictDoUpdate({ target: jobLeases.name, set: claim.set, setWhere: claim.setWhere })
          .returning({ fence: jobLeases.fence }),
      "retry",
    );
    const row = rows?.[0];
    return row ? { fence: row.fence } : null;
  };
  return {
    claim: (name, owner, slot, leaseUntil, now) => upsert(name, owner, slot, leaseUntil, now),
    claimNow: (name, owner, leaseUntil, now) => upsert(name, owner, null, leaseUntil, now),
    async finish(name, owner, fence, result, now) {
      const done = await autocommitWrite(
        () =>
          db
            .update(jobLeases)
            .set({ owner: null, leaseUntil: null, lastFinishedAt: now, lastResult: result })
            .where(and(eq(jobLeases.name, name), eq(jobLeases.owner, owner), eq(jobLeases.fence, fence)))
            .returning({ name: jobLeases.name }),
        "retry",
      );
      return done?.length === 1;
    },
    async list() {
      // Byte order, as SQLite compares text.
      const rows = await db.select().from(jobLeases).orderBy(sql`${jobLeases.name} COLLATE "C"`);
      return rows as JobLease[];
    },
  };
}
