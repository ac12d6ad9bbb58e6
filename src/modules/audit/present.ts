// The audit route's answer: an entry as the API shows it.
import type { AuditRecord } from "./repo";
import { sortedKeys } from "../../shared/json";

export const presentAudit = (r: AuditRecord) => ({
  id: r.id,
  actor_type: r.actorType,
  actor_id: r.actorId,
  action: r.action,
  entity_type: r.entityType,
  entity_id: r.entityId,
  product_id: r.productId,
  // jsonb (PostgreSQL) and JSON text (SQLite) keep keys in different orders: one order on the wire.
  changes: sortedKeys(r.changes),
  ip: r.ip,
  request_id: r.requestId,
  created_at: r.createdAt.toISOString(),
});
