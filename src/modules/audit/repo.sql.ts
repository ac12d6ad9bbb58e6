// AuditRepo on both engines, written once against the query seam (db/dialect/query.ts).
import { and, desc, eq, gte, lte, type SQL } from "drizzle-orm";
import type { QueryDialect } from "../../db/dialect/query";
import { afterCursor, decodeCursor, keysetPage } from "../../db/cursor";
import type { AuditFilter, AuditRecord, AuditRepo } from "./repo";

type Row = QueryDialect["tables"]["auditLog"]["$inferSelect"];
const toRecord = (r: Row): AuditRecord => ({ ...r, changes: r.changes ?? null });

/** GET /admin/audit's one statement for a filter (exported for the query-plan test). */
export function auditListQuery(d: QueryDialect, f: AuditFilter) {
  const { auditLog } = d.tables;
  const where: SQL[] = [];
  if (f.entityType) where.push(eq(auditLog.entityType, f.entityType));
  if (f.entityId) where.push(eq(auditLog.entityId, f.entityId));
  if (f.action) where.push(eq(auditLog.action, f.action));
  if (f.actorId) where.push(eq(auditLog.actorId, f.actorId));
  if (f.productId) where.push(eq(auditLog.productId, f.productId));
  if (f.since) where.push(gte(auditLog.createdAt, f.since));
  if (f.until) where.push(lte(auditLog.createdAt, f.until));
  // Newest first; ids are UUIDv7 so (created_at, id) is a stable total order.
  if (f.cursor) where.push(afterCursor(auditLog.createdAt, d.byteOrder(auditLog.id), decodeCursor(f.cursor)));
  return d.db
    .select()
    .from(auditLog)
    .where(where.length ? and(...where) : undefined)
    .orderBy(desc(auditLog.createdAt), desc(d.byteOrder(auditLog.id)))
    .limit(f.limit + 1);
}

export function createAuditRepo(d: QueryDialect): AuditRepo {
  return {
    async list(f) {
      return keysetPage((await auditListQuery(d, f)).map(toRecord), f.limit);
    },
  };
}
