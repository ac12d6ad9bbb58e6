import type { Actor } from "../../shared/actor";

export interface AuditEntry {
  actor: Actor;
  action: string;
  entityType: string;
  entityId: string | null;
  productId: string | null;
  changes: Record<string, unknown> | null;
  at: Date;
}

export interface AuditRecord {
  id: string;
  actorType: Actor["type"];
  actorId: string | null;
  action: string;
  entityType: string;
  entityId: string | null;
  productId: string | null;
  changes: unknown;
  ip: string | null;
  requestId: string | null;
  createdAt: Date;
}

export interface AuditFilter {
  entityType?: string;
  entityId?: string;
  action?: string;
  actorId?: string;
  productId?: string;
  since?: Date;
  until?: Date;
  cursor?: string;
  limit: number;
}

export interface AuditRepo {
  list(filter: AuditFilter): Promise<{ items: AuditRecord[]; nextCursor: string | null }>;
}
