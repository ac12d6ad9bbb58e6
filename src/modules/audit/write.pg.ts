// Shared by every repo.pg.ts: admin mutations call this inside their own transaction (the `tx` of
// `db.transaction`), so the audit row commits or rolls back with the change it describes.
import type { PgDb } from "../../db/pg";
import { auditLog } from "../../db/schema-pg";
import { newId } from "../../shared/ids";
import type { AuditEntry } from "./repo";

/** A drizzle PostgreSQL database or an open transaction on it. */
export type PgExecutor = Pick<PgDb, "insert" | "select" | "update" | "delete" | "execute">;

export async function writeAuditPg(tx: PgExecutor, entry: AuditEntry): Promise<void> {
  await tx.insert(auditLog).values({
    id: newId(),
    actorType: entry.actor.type,
    actorId: entry.actor.id,
    action: entry.action,
    entityType: entry.entityType,
    entityId: entry.entityId,
    productId: entry.productId,
    changes: entry.changes,
    ip: entry.actor.ip,
    requestId: entry.actor.requestId,
    createdAt: entry.at,
  });
}
