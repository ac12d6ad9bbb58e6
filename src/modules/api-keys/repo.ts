import type { Scope } from "../../shared/actor";

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

/** API key rows: the verbs (service.ts) write their audit rows in the same unit of work. */
export interface ApiKeyRepo {
  create(record: ApiKeyRecord): Promise<ApiKeyRecord>;
  findByHash(hash: string): Promise<ApiKeyRecord | null>;
  findById(id: string): Promise<ApiKeyRecord | null>;
  list(): Promise<ApiKeyRecord[]>;
  /**
   * Stamps revoked_at unless the key is revoked already (a conditional write: of several nodes
   * revoking at once, exactly one gets `revoked: true`); the key as it is now, or null when unknown.
   */
  revoke(id: string, at: Date): Promise<{ key: ApiKeyRecord; revoked: boolean } | null>;
  touch(id: string, at: Date): Promise<void>;
}
