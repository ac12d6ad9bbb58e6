import { and, asc, eq, gte, inArray, lt, lte, sql, type SQL } from "drizzle-orm";
import { atomically, type PgHandle } from "../../db/pg";
import { afterCursor, decodeCursor, keysetPage } from "../../db/cursor";
import { outbox } from "../../db/schema-pg";
import { FINISHED_OUTBOX_STATUSES, type EmailFilter, type EventFilter, type OutboxMessage, type OutboxRepo } from "./repo";
import { DELIVERY_CHANNEL, notifyDelivery, writeEffectsPg, writeOutboxPg } from "./write.pg";

/** The id in byte order (SQLite's text comparison), whatever the database collation. */
const idBytes = sql`${outbox.id} COLLATE "C"`;
/** ASCII-only lower-casing, as SQLite's lower() does, so both engines match the same addresses. */
const asciiLower = (v: SQL) => sql`lower(${v} COLLATE "C")`;

/** OutboxRepo.nextDue's one statement (exported for the query-plan test). */
export const NEXT_DUE_SQL_PG = `SELECT (extract(epoch FROM (SELECT min(next_attempt_at) FROM outbox WHERE status = 'pending')) * 1000)::float8 AS outbox,
  (extract(epoch FROM (
     SELECT min((SELECT d.next_attempt_at FROM webhook_deliveries d
                  WHERE d.endpoint_id = e.id AND d.status = 'pending'
                  ORDER BY d.next_attempt_at LIMIT 1))
       FROM webhook_endpoints e WHERE e.enabled)) * 1000)::float8 AS webhooks`;

/** One newest-first page (limit + 1 rows) of the outbox rows matching `where` (the email and event lists). */
const newestFirst = (db: PgHandle["db"], where: SQL[], limit: number) =>
  db.select().from(outbox).where(and(...where)).orderBy(sql`${outbox.createdAt} DESC`, sql`${idBytes} DESC`).limit(limit + 1);

/** GET /admin/emails' one statement for a filter (exported for the query-plan test). */
export function emailListQueryPg(db: PgHandle["db"], f: EmailFilter) {
  const where: SQL[] = [eq(outbox.kind, "email")];
  if (f.status) where.push(eq(outbox.status, f.status));
  if (f.template) where.push(eq(outbox.topic, f.template));
  // The expression is outbox_email_to_idx's (db/schema-pg/system.ts): keep the two identical.
  if (f.to) where.push(sql`${asciiLower(sql`${outbox.payload} ->> 'to'`)} = ${asciiLower(sql`${f.to}::text`)}`);
  // Same cursor as SQLite: (created_at, id) newest first, ids compared by bytes.
  if (f.cursor) where.push(afterCursor(outbox.createdAt, idBytes, decodeCursor(f.cursor)));
  return newestFirst(db, where, f.limit);
}

/** GET /admin/events' one statement for a filter (exported for the query-plan test). */
export function eventListQueryPg(db: PgHandle["db"], f: EventFilter) {
  const where: SQL[] = [eq(outbox.kind, "event")];
  if (f.type) where.push(eq(outbox.topic, f.type));
  // No index serves a prefix in created_at order: the page walks outbox_kind_created_idx.
  if (f.typePrefix) where.push(sql`left(${outbox.topic}, ${f.typePrefix.length}) = ${f.typePrefix}::text`);
  if (f.since) where.push(gte(outbox.createdAt, f.since));
  if (f.until) where.push(lt(outbox.createdAt, f.until));
  // The expression is outbox_event_product_idx's (db/schema-pg/system.ts): keep the two identical.
  if (f.productId) where.push(sql`${outbox.payload} -> 'data' ->> 'product_id' = ${f.productId}::text`);
  if (f.cursor) where.push(afterCursor(outbox.createdAt, idBytes, decodeCursor(f.cursor)));
  return newestFirst(db, where, f.limit);
}

export function createOutboxRepoPg(handle: PgHandle): OutboxRepo {
  const { db } = handle;
  return {
    async writeEffects(effects) {
      await atomically(handle, (tx) => writeEffectsPg(tx, effects));
    },
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
    async nextDue() {
      // outbox_due_idx (status, next_attempt_at) gives the minimum in one seek; the endpoints are
      // few, and each one's earliest due delivery is one seek in webhook_deliveries_endpoint_due_idx.
      const [row] = (await db.execute(sql.raw(NEXT_DUE_SQL_PG))) as unknown as { outbox: number | null; webhooks: number | null }[];
      const at = (ms: number | null | undefined) => (ms == null ? null : new Date(ms));
      return { outbox: at(row?.outbox), webhooks: at(row?.webhooks) };
    },
    async onDeliveryWork(wake) {
      // postgres.js keeps a connection of its own for LISTEN (and listens again after reconnecting).
      // Through a pooler in transaction mode LISTEN does not work: the worker's poll still finds the work.
      const { unlisten } = await handle.sql.listen(DELIVERY_CHANNEL, () => wake());
      return async () => {
        await unlisten().catch(() => {});
      };
    },
    async wakeDeliveryWork() {
      await notifyDelivery(db);
    },
    async markSent(id, claim, now, status = "sent") {
      const done = await db
        .update(outbox)
        .set({ status, sentAt: now })
        .where(and(eq(outbox.id, id), eq(outbox.status, "pending"), eq(outbox.nextAttemptAt, claim)))
        .returning({ id: outbox.id });
      return done.length === 1;
    },
    async markSentMany(items, now) {
      if (items.length === 0) return new Set<string>();
      // One statement: each row is matched with its own claim and status from a VALUES list.
      const values = sql.join(
        items.map((m) => sql`(${m.id}, ${m.claim.toISOString()}::timestamptz, ${m.status})`),
        sql`, `,
      );
      const rows = (await db.execute(sql`UPDATE ${outbox} SET status = v.status, sent_at = ${now.toISOString()}::timestamptz
        FROM (VALUES ${values}) AS v(id, claim, status)
        WHERE ${outbox.id} = v.id AND ${outbox.status} = 'pending' AND ${outbox.nextAttemptAt} = v.claim
        RETURNING ${outbox.id} AS id`)) as unknown as { id: string }[];
      return new Set(rows.map((r) => r.id));
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
    async listEmails(f) {
      return keysetPage((await emailListQueryPg(db, f)) as OutboxMessage[], f.limit);
    },
    async listEvents(f) {
      return keysetPage((await eventListQueryPg(db, f)) as OutboxMessage[], f.limit);
    },
    async pruneFinished(before, limit) {
      if (limit <= 0) return 0;
      // The conditions are repeated on the DELETE itself: PostgreSQL re-checks them against a row
      // another transaction changed meanwhile, so a row that is no longer finished stays.
      const finished = and(inArray(outbox.status, [...FINISHED_OUTBOX_STATUSES]), lt(outbox.nextAttemptAt, before));
      const batch = db.select({ id: outbox.id }).from(outbox).where(finished).limit(limit);
      return (await db.delete(outbox).where(and(inArray(outbox.id, batch), finished)).returning({ id: outbox.id })).length;
    },
  };
}
