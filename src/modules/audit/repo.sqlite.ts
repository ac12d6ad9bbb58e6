import { and, desc, eq, gte, lte, type SQL } from "drizzle-orm";
import type { DbHandle } from "../../db/client";
import { auditLog } from "../../db/schema";
import { afterCursor, decodeCursor, keysetPage } from "../../db/cursor";
import type { AuditFilter, AuditRecord, AuditRepo } from "./repo";

type Row = typeof auditLog.$inferSelect;
const toRecord = (r: Row): AuditRecord => ({ ...r, changes: r.changes ?? null });

/** GET /admin/audit's one statement for a filter (exported for the query-plan test). */
export function auditListQuery(db: DbHandle["db"], f: AuditFilter) {
  const where: SQL[] = [];
  if (f.entityType) where.push(eq(auditLog.entityType, f.entityType));
  if (f.entityId) where.push(eq(auditLog.entityId, f.entityId));
  if (f.action) where.push(eq(auditLog.action, f.action));
  if (f.actorId) where.push(eq(auditLog.actorId, f.actorId));
  if (f.productId) where.push(eq(auditLog.productId, f.productId));
  if (f.since) where.push(gte(auditLog.createdAt, f.since));
  if (f.until) where.push(lte(auditLog.createdAt, f.until));
  // Newest first; ids are UUIDv7 so (created_at, id) is a stable total order.
  if (f.cursor) where.push(afterCursor(auditLog.createdAt, auditLog.id, decodeCursor(f.cursor)));
  return db
    .select()
    .from(auditLog)
    .where(where.length ? and(...where) : undefined)
    .orderBy(desc(auditLog.createdAt), desc(auditLog.id))
    .limit(f.limit + 1);
}

export function createAuditRepo(handle: DbHandle): AuditRepo {
  const { db } = handle;
  return {
    async list(f) {
      return keysetPage(auditListQuery(db, f).all().map(toRecord), f.limit);
    },
  };
}
