import type { Scope } from "../../shared/actor";
import type { Effects } from "../outbox/effects";

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
  create(record: ApiKeyRecord, effects: Effects | null): Promise<ApiKeyRecord>;
  findByHash(hash: string): Promise<ApiKeyRecord | null>;
  findById(id: string): Promise<ApiKeyRecord | null>;
  list(): Promise<ApiKeyRecord[]>;
  revoke(id: string, at: Date, effects: Effects): Promise<ApiKeyRecord | null>;
  touch(id: string, at: Date): Promise<void>;
}
