import { and, eq, inArray, lt } from "drizzle-orm";
import type { PgHandle } from "../../db/pg";
import { meterQueue } from "../../db/schema-pg";
import { FINISHED_METER_STATUSES, type MeterEvent, type MeterQueueRepo } from "./repo";

const byOccurrence = (a: MeterEvent, b: MeterEvent) => a.occurredAt.getTime() - b.occurredAt.getTime() || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

export function createMeterQueueRepoPg(handle: PgHandle): MeterQueueRepo {
  const { db } = handle;
  const mine = (id: string, attempts: number) => and(eq(meterQueue.id, id), eq(meterQueue.status, "pending"), eq(meterQueue.attempts, attempts));
  return {
    async enqueue(event) {
      await db.insert(meterQueue).values(event);
    },
    async claimDue(now, claimUntil, limit) {
      // One statement. The due rows are locked in a MATERIALIZED CTE (rows another drainer's claim is
      // locking are skipped, not waited for): as a plain `IN (subquery … LIMIT)` PostgreSQL may rescan
      // the subquery while updating, and each rescan — the rows it just claimed no longer due — would
      // claim more than `limit`. The status is re-checked on the latest row version.
      const claimed = await handle.sql<{ id: string }[]>`
        WITH due AS MATERIALIZED (
          SELECT id FROM meter_queue
           WHERE status = 'pending' AND next_attempt_at <= ${now.toISOString()}::timestamptz
           ORDER BY next_attempt_at, id
           LIMIT ${limit}
             FOR UPDATE SKIP LOCKED)
        UPDATE meter_queue q SET attempts = q.attempts + 1, next_attempt_at = ${claimUntil.toISOString()}::timestamptz
          FROM due
         WHERE q.id = due.id AND q.status = 'pending'
        RETURNING q.id`;
      if (claimed.length === 0) return [];
      const rows = (await db.select().from(meterQueue).where(inArray(meterQueue.id, claimed.map((r) => r.id)))) as MeterEvent[];
      return rows.sort(byOccurrence);
    },
    async markSent(id, attempts, at) {
      return (await db.update(meterQueue).set({ status: "sent", sentAt: at, lastError: null }).where(mine(id, attempts)).returning({ id: meterQueue.id })).length === 1;
    },
    async markSkipped(id, attempts, reason) {
      return (await db.update(meterQueue).set({ status: "skipped", lastError: reason }).where(mine(id, attempts)).returning({ id: meterQueue.id })).length === 1;
    },
    async retryLater(id, attempts, nextAttemptAt, error) {
      return (await db.update(meterQueue).set({ nextAttemptAt, lastError: error }).where(mine(id, attempts)).returning({ id: meterQueue.id })).length === 1;
    },
    async listByLicense(licenseId) {
      return ((await db.select().from(meterQueue).where(eq(meterQueue.licenseId, licenseId))) as MeterEvent[]).sort(byOccurrence);
    },
    async pruneFinished(before, limit) {
      if (limit <= 0) return 0;
      // The conditions are repeated on the DELETE itself: PostgreSQL re-checks them against a row
      // another transaction changed meanwhile.
      const finished = and(inArray(meterQueue.status, [...FINISHED_METER_STATUSES]), lt(meterQueue.nextAttemptAt, before));
      const batch = db.select({ id: meterQueue.id }).from(meterQueue).where(finished).limit(limit);
      return (await db.delete(meterQueue).where(and(inArray(meterQueue.id, batch), finished)).returning({ id: meterQueue.id })).length;
    },
  };
}
