import type { Scope } from "../../shared/actor";
import type { AuditEntry } from "../audit/repo";

export interface ApiKeyRecord {
  id: string;
  name: string;
  keyHash: string;
  keyPrefix: string;
  scopes: Scope[];
  productId: string | null;
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
}

export interface ApiKeyRepo {
  create(record: ApiKeyRecord, audit: AuditEntry | null): ApiKeyRecord;
  findByHash(hash: string): ApiKeyRecord | null;
  findById(id: string): ApiKeyRecord | null;
  list(): ApiKeyRecord[];
  revoke(id: string, at: Date, audit: AuditEntry): ApiKeyRecord | null;
  touch(id: string, at: Date): void;
}
