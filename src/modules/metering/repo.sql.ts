// MeterQueueRepo on both engines, written once against the query seam (db/dialect/query.ts).
import { and, asc, eq, inArray, lt, lte, sql } from "drizzle-orm";
import type { QueryDialect } from "../../db/dialect/query";
import { FINISHED_METER_STATUSES, type MeterEvent, type MeterQueueRepo } from "./repo";

const byOccurrence = (a: MeterEvent, b: MeterEvent) => a.occurredAt.getTime() - b.occurredAt.getTime() || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

export function createMeterQueueRepo(d: QueryDialect): MeterQueueRepo {
  const { db } = d;
  const { meterQueue } = d.tables;
  const mine = (id: string, attempts: number) => and(eq(meterQueue.id, id), eq(meterQueue.status, "pending"), eq(meterQueue.attempts, attempts));
  const changedOne = async (rows: PromiseLike<unknown[]>) => (await rows).length === 1;
  return {
    async enqueue(event) {
      await db.insert(meterQueue).values(event);
    },
    async claimDue(now, claimUntil, limit) {
      // In the caller's unit of work: the due rows are read and locked (rows another drainer's claim
      // holds are skipped, not waited for; on SQLite the unit holds the one write lock), then claimed
      // by id with the status re-checked. Two statements in one transaction rather than an UPDATE over
      // `IN (subquery … LIMIT)`, which PostgreSQL may rescan while updating and so claim more than `limit`.
      const due = await d.forUpdate(
        db
          .select({ id: meterQueue.id })
          .from(meterQueue)
          .where(and(eq(meterQueue.status, "pending"), lte(meterQueue.nextAttemptAt, now)))
          // In meter_queue_due_idx order (its id in the database collation: any tie order will do).
          .orderBy(asc(meterQueue.nextAttemptAt), asc(meterQueue.id))
          .limit(limit),
        "update",
        { skipLocked: true },
      );
      if (due.length === 0) return [];
      const claimed = (await db
        .update(meterQueue)
        .set({ attempts: sql`${meterQueue.attempts} + 1`, nextAttemptAt: claimUntil })
        .where(and(inArray(meterQueue.id, due.map((r) => r.id)), eq(meterQueue.status, "pending")))
        .returning()) as MeterEvent[];
      return claimed.sort(byOccurrence);
    },
    async markSent(id, attempts, at) {
      return changedOne(db.update(meterQueue).set({ status: "sent", sentAt: at, lastError: null }).where(mine(id, attempts)).returning({ id: meterQueue.id }));
    },
    async markSkipped(id, attempts, reason) {
      return changedOne(db.update(meterQueue).set({ status: "skipped", lastError: reason }).where(mine(id, attempts)).returning({ id: meterQueue.id }));
    },
    async retryLater(id, attempts, nextAttemptAt, error) {
      return changedOne(db.update(meterQueue).set({ nextAttemptAt, lastError: error }).where(mine(id, attempts)).returning({ id: meterQueue.id }));
    },
    async listByLicense(licenseId) {
      return ((await db.select().from(meterQueue).where(eq(meterQueue.licenseId, licenseId))) as MeterEvent[]).sort(byOccurrence);
    },
    async pruneFinished(before, limit) {
      if (limit <= 0) return 0;
      // One statement, so one short write transaction; the conditions are repeated on the DELETE, so
      // a row another transaction changed meanwhile is re-checked.
      const finished = and(inArray(meterQueue.status, [...FINISHED_METER_STATUSES]), lt(meterQueue.nextAttemptAt, before));
      const batch = db.select({ id: meterQueue.id }).from(meterQueue).where(finished).limit(limit);
      return (await db.delete(meterQueue).where(and(inArray(meterQueue.id, batch), finished)).returning({ id: meterQueue.id })).length;
    },
  };
}
