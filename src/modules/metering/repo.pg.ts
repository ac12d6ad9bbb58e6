import { and, asc, eq, inArray, lte, sql } from "drizzle-orm";
import type { PgHandle } from "../../db/pg";
import { meterQueue } from "../../db/schema-pg";
import type { MeterEvent, MeterQueueRepo } from "./repo";

const byOccurrence = (a: MeterEvent, b: MeterEvent) => a.occurredAt.getTime() - b.occurredAt.getTime() || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

export function createMeterQueueRepoPg(handle: PgHandle): MeterQueueRepo {
  const { db } = handle;
  const mine = (id: string, attempts: number) => and(eq(meterQueue.id, id), eq(meterQueue.status, "pending"), eq(meterQueue.attempts, attempts));
  return {
    async enqueue(event) {
      await db.insert(meterQueue).values(event);
    },
    async claimDue(now, claimUntil, limit) {
      // One statement: the due rows are locked by the subquery (rows another drainer's claim holds are
      // skipped, not waited for) and claimed by the UPDATE. The outer condition is re-checked on the
      // latest row version, so a row claimed and committed meanwhile is not claimed again.
      const due = db
        .select({ id: meterQueue.id })
        .from(meterQueue)
        .where(and(eq(meterQueue.status, "pending"), lte(meterQueue.nextAttemptAt, now)))
        .orderBy(asc(meterQueue.nextAttemptAt), asc(meterQueue.id))
        .limit(limit)
        .for("update", { skipLocked: true });
      const claimed = (await db
        .update(meterQueue)
        .set({ attempts: sql`${meterQueue.attempts} + 1`, nextAttemptAt: claimUntil })
        .where(and(inArray(meterQueue.id, due), eq(meterQueue.status, "pending"), lte(meterQueue.nextAttemptAt, now)))
        .returning()) as MeterEvent[];
      return claimed.sort(byOccurrence);
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
  };
}
