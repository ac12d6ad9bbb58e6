import { and, asc, eq, inArray, lt, lte, sql } from "drizzle-orm";
import { immediate, type DbHandle } from "../../db/client";
import { meterQueue } from "../../db/schema";
import { FINISHED_METER_STATUSES, type MeterEvent, type MeterQueueRepo } from "./repo";

const byOccurrence = (a: MeterEvent, b: MeterEvent) => a.occurredAt.getTime() - b.occurredAt.getTime() || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

export function createMeterQueueRepo(handle: DbHandle): MeterQueueRepo {
  const { db } = handle;
  const mine = (id: string, attempts: number) => and(eq(meterQueue.id, id), eq(meterQueue.status, "pending"), eq(meterQueue.attempts, attempts));
  const changed = (rows: unknown[]) => rows.length === 1;
  return {
    async enqueue(event) {
      db.insert(meterQueue).values(event).run();
    },
    async claimDue(now, claimUntil, limit) {
      // One writer at a time on SQLite: the read and the claim in one immediate transaction.
      return immediate(handle, () => {
        const due = db
          .select({ id: meterQueue.id })
          .from(meterQueue)
          .where(and(eq(meterQueue.status, "pending"), lte(meterQueue.nextAttemptAt, now)))
          .orderBy(asc(meterQueue.nextAttemptAt), asc(meterQueue.id))
          .limit(limit)
          .all()
          .map((r) => r.id);
        if (due.length === 0) return [];
        const claimed = db
          .update(meterQueue)
          .set({ attempts: sql`${meterQueue.attempts} + 1`, nextAttemptAt: claimUntil })
          .where(inArray(meterQueue.id, due))
          .returning()
          .all() as MeterEvent[];
        return claimed.sort(byOccurrence);
      });
    },
    async markSent(id, attempts, at) {
      return changed(db.update(meterQueue).set({ status: "sent", sentAt: at, lastError: null }).where(mine(id, attempts)).returning({ id: meterQueue.id }).all());
    },
    async markSkipped(id, attempts, reason) {
      return changed(db.update(meterQueue).set({ status: "skipped", lastError: reason }).where(mine(id, attempts)).returning({ id: meterQueue.id }).all());
    },
    async retryLater(id, attempts, nextAttemptAt, error) {
      return changed(db.update(meterQueue).set({ nextAttemptAt, lastError: error }).where(mine(id, attempts)).returning({ id: meterQueue.id }).all());
    },
    async listByLicense(licenseId) {
      return (db.select().from(meterQueue).where(eq(meterQueue.licenseId, licenseId)).all() as MeterEvent[]).sort(byOccurrence);
    },
    async pruneFinished(before, limit) {
      if (limit <= 0) return 0;
      // One statement, so one short write transaction: other writers wait for a batch at most. The
      // rows are deleted by primary key (SQLite has one writer: nothing changes them in between).
      const finished = and(inArray(meterQueue.status, [...FINISHED_METER_STATUSES]), lt(meterQueue.nextAttemptAt, before));
      const batch = db.select({ id: meterQueue.id }).from(meterQueue).where(finished).limit(limit);
      return db.delete(meterQueue).where(inArray(meterQueue.id, batch)).returning({ id: meterQueue.id }).all().length;
    },
  };
}
