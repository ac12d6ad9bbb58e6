import { and, asc, desc, eq, gte, inArray, lt, lte, sql, type SQL } from "drizzle-orm";
import { immediate, lazyStatement, lift, type DbHandle } from "../../db/client";
import { afterCursor, decodeCursor, keysetPage } from "../../db/cursor";
import { outbox } from "../../db/schema";
import { FINISHED_OUTBOX_STATUSES, type EmailFilter, type EventFilter, type OutboxMessage, type OutboxRepo } from "./repo";
import { onDeliveryBell, ringDeliveryBell } from "./bell";
import { writeEffects, writeOutbox } from "./write.sqlite";

/** OutboxRepo.nextDue's one statement (exported for the query-plan test). */
export const NEXT_DUE_SQL = `SELECT (SELECT min(next_attempt_at) FROM outbox WHERE status = 'pending') AS outbox,
  (SELECT min((SELECT d.next_attempt_at FROM webhook_deliveries d
               WHERE d.endpoint_id = e.id AND d.status = 'pending'
               ORDER BY d.next_attempt_at LIMIT 1))
     FROM webhook_endpoints e WHERE e.enabled = 1) AS webhooks`;

/** One newest-first page (limit + 1 rows) of the outbox rows matching `where` (the email and event lists). */
const newestFirst = (db: DbHandle["db"], where: SQL[], limit: number) =>
  db.select().from(outbox).where(and(...where)).orderBy(desc(outbox.createdAt), desc(outbox.id)).limit(limit + 1);

/** GET /admin/emails' one statement for a filter (exported for the query-plan test). */
export function emailListQuery(db: DbHandle["db"], f: EmailFilter) {
  const where: SQL[] = [eq(outbox.kind, "email")];
  if (f.status) where.push(eq(outbox.status, f.status));
  if (f.template) where.push(eq(outbox.topic, f.template));
  // SQLite's lower() folds ASCII only; the PostgreSQL repository compares the same way. The
  // expression is outbox_email_to_idx's (db/schema/system.ts): keep the two identical.
  if (f.to) where.push(sql`lower(${outbox.payload} ->> '$.to') = lower(${f.to})`);
  if (f.cursor) where.push(afterCursor(outbox.createdAt, outbox.id, decodeCursor(f.cursor)));
  return newestFirst(db, where, f.limit);
}

/** GET /admin/events' one statement for a filter (exported for the query-plan test). */
export function eventListQuery(db: DbHandle["db"], f: EventFilter) {
  const where: SQL[] = [eq(outbox.kind, "event")];
  if (f.type) where.push(eq(outbox.topic, f.type));
  // substr compares bytes exactly (LIKE would fold ASCII case in SQLite). No index serves a prefix in
  // created_at order: the page walks outbox_kind_created_idx and skips the other types.
  if (f.typePrefix) where.push(sql`substr(${outbox.topic}, 1, ${f.typePrefix.length}) = ${f.typePrefix}`);
  if (f.since) where.push(gte(outbox.createdAt, f.since));
  if (f.until) where.push(lt(outbox.createdAt, f.until));
  // The expression is outbox_event_product_idx's (db/schema/system.ts): keep the two identical.
  if (f.productId) where.push(sql`(${outbox.payload} ->> '$.data.product_id') = ${f.productId}`);
  if (f.cursor) where.push(afterCursor(outbox.createdAt, outbox.id, decodeCursor(f.cursor)));
  return newestFirst(db, where, f.limit);
}

export function createOutboxRepo(handle: DbHandle): OutboxRepo {
  const { db } = handle;
  // Run once per message delivered: prepared once. Instants are bound as epoch ms (the columns'
  // storage; bare placeholders skip drizzle's encoders).
  const p = (name: string) => sql`${sql.placeholder(name)}`;
  const sentStmt = lazyStatement(() =>
    db
      .update(outbox)
      .set({ status: p("status") as never, sentAt: p("now") })
      .where(and(eq(outbox.id, p("id")), eq(outbox.status, "pending"), eq(outbox.nextAttemptAt, p("claim"))))
      .returning({ id: outbox.id })
      .prepare(),
  );
  return {
    async writeEffects(effects) {
      // Inside a unit of work this is a savepoint of its transaction.
      immediate(handle, () => writeEffects(db, effects));
    },
    enqueue: lift((m) => writeOutbox(db, m)),
    get: lift((id: string) => (db.select().from(outbox).where(eq(outbox.id, id)).get() as OutboxMessage | undefined) ?? null),
    async claimDue({ now, limit, leaseUntil, kinds }) {
      if (kinds.length === 0 || limit <= 0) return [];
      // A background writer: waits its turn (the checkpoint thread restarting the WAL, the lifecycle
      // thread's transaction: db/background-gate.sqlite.ts). IMMEDIATE: the write lock is taken before
      // the read, so two processes on one file never pick the same rows.
      return handle.backgroundGate.write(() => immediate(handle, () => {
        const due = db
          .select({ id: outbox.id })
          .from(outbox)
          .where(and(eq(outbox.status, "pending"), inArray(outbox.kind, [...kinds]), lte(outbox.nextAttemptAt, now)))
          .orderBy(asc(outbox.nextAttemptAt), asc(outbox.id))
          .limit(limit)
          .all()
          .map((r) => r.id);
        if (due.length === 0) return [];
        const claimed = db.update(outbox).set({ nextAttemptAt: leaseUntil }).where(inArray(outbox.id, due)).returning().all() as OutboxMessage[];
        // Oldest first (ids are time-ordered UUIDv7 and compared by bytes), as the PostgreSQL repository returns them.
        return claimed.sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
      }));
    },
    async nextDue() {
      // outbox_due_idx (status, next_attempt_at) gives the minimum in one seek; the endpoints are
      // few, and each one's earliest due delivery is one seek in webhook_deliveries_endpoint_due_idx.
      const row = handle.sqlite.query<{ outbox: number | null; webhooks: number | null }, []>(NEXT_DUE_SQL).get();
      const at = (ms: number | null | undefined) => (ms == null ? null : new Date(ms));
      return { outbox: at(row?.outbox), webhooks: at(row?.webhooks) };
    },
    async onDeliveryWork(wake) {
      const off = onDeliveryBell(wake);
      return async () => off();
    },
    async wakeDeliveryWork() {
      // A ring before the commit is harmless (bell.ts): the worker reads after the unit has ended.
      ringDeliveryBell();
    },
    async markSent(id, claim, now, status = "sent") {
      return handle.backgroundGate.write(() => sentStmt().all({ id, claim: claim.getTime(), now: now.getTime(), status }).length === 1);
    },
    async markSentMany(items, now) {
      const marked = new Set<string>();
      if (items.length === 0) return marked;
      await handle.backgroundGate.write(() =>
        immediate(handle, () => {
          for (const m of items) if (sentStmt().all({ id: m.id, claim: m.claim.getTime(), now: now.getTime(), status: m.status }).length === 1) marked.add(m.id);
        }),
      );
      return marked;
    },
    async markFailed(id, claim, error, nextAttemptAt) {
      const done = await handle.backgroundGate.write(() =>
        db
          .update(outbox)
          .set({
            attempts: sql`${outbox.attempts} + 1`,
            lastError: error,
            ...(nextAttemptAt ? { nextAttemptAt } : { status: "failed" as const }),
          })
          .where(and(eq(outbox.id, id), eq(outbox.status, "pending"), eq(outbox.nextAttemptAt, claim)))
          .returning({ id: outbox.id })
          .all(),
      );
      return done.length === 1;
    },
    async listEmails(f) {
      return keysetPage(emailListQuery(db, f).all() as OutboxMessage[], f.limit);
    },
    async listEvents(f) {
      return keysetPage(eventListQuery(db, f).all() as OutboxMessage[], f.limit);
    },
    async pruneFinished(before, limit) {
      if (limit <= 0) return 0;
      // One statement, so one short write transaction: other writers wait for a batch at most. The
      // rows are deleted by primary key (SQLite has one writer: nothing changes them in between).
      const finished = and(inArray(outbox.status, [...FINISHED_OUTBOX_STATUSES]), lt(outbox.nextAttemptAt, before));
      const batch = db.select({ id: outbox.id }).from(outbox).where(finished).limit(limit);
      return db.delete(outbox).where(inArray(outbox.id, batch)).returning({ id: outbox.id }).all().length;
    },
  };
}
