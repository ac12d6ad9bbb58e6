import { and, asc, eq, inArray, lte, sql } from "drizzle-orm";
import type { PgHandle } from "../../db/pg";
import { outbox } from "../../db/schema-pg";
import type { OutboxMessage, OutboxRepo } from "./repo";
import { writeOutboxPg } from "./write.pg";

export function createOutboxRepoPg(handle: PgHandle): OutboxRepo {
  const { db } = handle;
  return {
    enqueue: (m) => writeOutboxPg(db, m),
    async get(id) {
      const [row] = await db.select().from(outbox).where(eq(outbox.id, id));
      return (row as OutboxMessage | undefined) ?? null;
    },
    async claimDue({ now, limit, leaseUntil, kinds }) {
      if (kinds.length === 0 || limit <= 0) return [];
      // One statement: the subquery locks the due rows it picks and skips rows another node is
      // claiming right now (FOR UPDATE SKIP LOCKED); the update moves them out of "due" before the
      // locks are released, so a later claim does not see them either.
      const due = db
        .select({ id: outbox.id })
        .from(outbox)
        .where(and(eq(outbox.status, "pending"), inArray(outbox.kind, [...kinds]), lte(outbox.nextAttemptAt, now)))
        .orderBy(asc(outbox.nextAttemptAt), sql`${outbox.id} COLLATE "C"`)
        .limit(limit)
        .for("update", { skipLocked: true });
      const claimed = (await db.update(outbox).set({ nextAttemptAt: leaseUntil }).where(inArray(outbox.id, due)).returning()) as OutboxMessage[];
      // RETURNING has no order; every claimed row now has the same next_attempt_at, so restore the
      // claim order (oldest first; ids are time-ordered UUIDv7), as the SQLite repository returns it.
      return claimed.sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    },
    async markSent(id, claim, now) {
      const done = await db
        .update(outbox)
        .set({ status: "sent", sentAt: now })
        .where(and(eq(outbox.id, id), eq(outbox.status, "pending"), eq(outbox.nextAttemptAt, claim)))
        .returning({ id: outbox.id });
      return done.length === 1;
    },
    async markFailed(id, claim, error, nextAttemptAt) {
      const done = await db
        .update(outbox)
        .set({
          attempts: sql`${outbox.attempts} + 1`,
          lastError: error,
          ...(nextAttemptAt ? { nextAttemptAt } : { status: "failed" as const }),
        })
        .where(and(eq(outbox.id, id), eq(outbox.status, "pending"), eq(outbox.nextAttemptAt, claim)))
        .returning({ id: outbox.id });
      return done.length === 1;
    },
  };
}
