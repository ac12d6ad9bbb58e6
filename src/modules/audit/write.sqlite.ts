// Shared by every repo.sqlite.ts: admin mutations call this inside their own transaction, so the audit
// row commits or rolls back with the change it describes.
import type { Db } from "../../db/client";
import { auditLog } from "../../db/schema";
import { newId } from "../../shared/ids";
import type { AuditEntry } from "./repo";

export function writeAudit(db: Db, entry: AuditEntry): void {
  db.insert(auditLog)
    .values({
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
    })
    .run();
}
