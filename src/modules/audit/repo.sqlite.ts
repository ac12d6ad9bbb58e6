import { and, desc, eq, gte, lt, lte, or, type SQL } from "drizzle-orm";
import type { DbHandle } from "../../db/client";
import { auditLog } from "../../db/schema";
import { decodeCursor, keysetPage } from "../../db/cursor";
import type { AuditRecord, AuditRepo } from "./repo";

type Row = typeof auditLog.$inferSelect;
const toRecord = (r: Row): AuditRecord => ({ ...r, changes: r.changes ?? null });

export function createAuditRepo(handle: DbHandle): AuditRepo {
  const { db } = handle;
  return {
    async list(f) {
      const where: SQL[] = [];
      if (f.entityType) where.push(eq(auditLog.entityType, f.entityType));
      if (f.entityId) where.push(eq(auditLog.entityId, f.entityId));
      if (f.action) where.push(eq(auditLog.action, f.action));
      if (f.actorId) where.push(eq(auditLog.actorId, f.actorId));
      if (f.productId) where.push(eq(auditLog.productId, f.productId));
      if (f.since) where.push(gte(auditLog.createdAt, f.since));
      if (f.until) where.push(lte(auditLog.createdAt, f.until));
      const cursor = f.cursor ? decodeCursor(f.cursor) : null;
      if (cursor) {
        // Newest first; ids are UUIDv7 so (created_at, id) is a stable total order.
        const at = new Date(cursor.t);
        where.push(or(lt(auditLog.createdAt, at), and(eq(auditLog.createdAt, at), lt(auditLog.id, cursor.id)))!);
      }
      const rows = db
        .select()
        .from(auditLog)
        .where(where.length ? and(...where) : undefined)
        .orderBy(desc(auditLog.createdAt), desc(auditLog.id))
        .limit(f.limit + 1)
        .all();
      return keysetPage(rows.map(toRecord), f.limit);
    },
  };
}
