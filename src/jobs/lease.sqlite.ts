// JobLeaseRepo on SQLite: each claim is one upsert statement (SQLite runs it under its single write
// lock, so two processes on one file cannot both satisfy the condition).
import { and, asc, eq } from "drizzle-orm";
import type { DbHandle } from "../db/client";
import { jobLeases } from "../db/schema";
import type { JobLease, JobLeaseRepo } from "./lease";
import { claimUpsert } from "../db/lease-claim";

export function createJobLeaseRepo(handle: DbHandle): JobLeaseRepo {
  const { db } = handle;
  const upsert = (name: string, owner: string, slot: Date | null, leaseUntil: Date, now: Date) => {
    const claim = claimUpsert(jobLeases, name, owner, slot, leaseUntil, now);
    const row = db
      .insert(jobLeases)
      .values(claim.values)
      .onConflictDoUpdate({ target: jobLeases.name, set: claim.set, setWhere: claim.setWhere })
      .returning({ fence: jobLeases.fence })
      .get();
    return row ? { fence: row.fence } : null;
  };
  return {
    async claim(name, owner, slot, leaseUntil, now) {
      return upsert(name, owner, slot, leaseUntil, now);
    },
    async claimNow(name, owner, leaseUntil, now) {
      return upsert(name, owner, null, leaseUntil, now);
    },
    async finish(name, owner, fence, result, now) {
      const done = db
        .update(jobLeases)
        .set({ owner: null, leaseUntil: null, lastFinishedAt: now, lastResult: result })
        .where(and(eq(jobLeases.name, name), eq(jobLeases.owner, owner), eq(jobLeases.fence, fence)))
        .returning({ name: jobLeases.name })
        .all();
      return done.length === 1;
    },
    async list() {
      // SQLite compares text by bytes; the PostgreSQL repository orders with COLLATE "C" to match.
      return db.select().from(jobLeases).orderBy(asc(jobLeases.name)).all() as JobLease[];
    },
  };
}
