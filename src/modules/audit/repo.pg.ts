import { and, eq, gte, lte, sql, type SQL } from "drizzle-orm";
import type { PgHandle } from "../../db/pg";
import { auditLog } from "../../db/schema-pg";
import { afterCursor, decodeCursor, keysetPage } from "../../db/cursor";
import type { AuditFilter, AuditRecord, AuditRepo } from "./repo";

type Row = typeof auditLog.$inferSelect;
const toRecord = (r: Row): AuditRecord => ({ ...r, changes: r.changes ?? null });

/** The id in byte order (SQLite's text comparison), whatever the database collation. */
const idBytes = sql`${auditLog.id} COLLATE "C"`;

/** GET /admin/audit's one statement for a filter (exported for the query-plan test). */
export function auditListQueryPg(db: PgHandle["db"], f: AuditFilter) {
  const where: SQL[] = [];
  if (f.entityType) where.push(eq(auditLog.entityType, f.entityType));
  if (f.entityId) where.push(eq(auditLog.entityId, f.entityId));
  if (f.action) where.push(eq(auditLog.action, f.action));
  if (f.actorId) where.push(eq(auditLog.actorId, f.actorId));
  if (f.productId) where.push(eq(auditLog.productId, f.productId));
  if (f.since) where.push(gte(auditLog.createdAt, f.since));
  if (f.until) where.push(lte(auditLog.createdAt, f.until));
  // Newest first; ids are UUIDv7 so (created_at, id) is a stable total order. Same cursor as SQLite.
  if (f.cursor) where.push(afterCursor(auditLog.createdAt, idBytes, decodeCursor(f.cursor)));
  return db
    .select()
    .from(auditLog)
    .where(where.length ? and(...where) : undefined)
    .orderBy(sql`${auditLog.createdAt} DESC`, sql`${idBytes} DESC`)
    .limit(f.limit + 1);
}

export function createAuditRepoPg(handle: PgHandle): AuditRepo {
  const { db } = handle;
  return {
    async list(f) {
      return keysetPage((await auditListQueryPg(db, f)).map(toRecord), f.limit);
    },
  };
}
