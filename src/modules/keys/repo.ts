import type { Effects } from "../outbox/effects";

export type SigningKeyPurpose = "token" | "release";

export interface SigningKeyRecord {
  id: string;
  kid: string;
  purpose: SigningKeyPurpose;
  productId: string | null;
  publicKeyHex: string;
  privateKeyEncrypted: string;
  keyNumHex: string | null;
  active: boolean;
  createdAt: Date;
  retiredAt: Date | null;
}

export interface SigningKeyRepo {
  findActive(purpose: SigningKeyPurpose, productId: string | null): Promise<SigningKeyRecord | null>;
  list(purpose: SigningKeyPurpose, productId: string | null): Promise<SigningKeyRecord[]>;
  findByKid(kid: string): Promise<SigningKeyRecord | null>;
  /**
   * Atomically retires the current active key of (purpose, product) and inserts `next` as active,
   * unless `onlyIfNoneActive` and one exists (first-start race): then the existing key is returned.
   * Activating a kid that already exists revives that row instead of inserting a duplicate.
   */
  activate(next: SigningKeyRecord, opts: { onlyIfNoneActive: boolean; effects?: Effects }): Promise<SigningKeyRecord>;
}

/** A signing_keys row as either engine's schema reads it (same columns, same property names). */
export interface SigningKeyRow {
  id: string;
  kid: string;
  purpose: SigningKeyPurpose;
  productId: string | null;
  publicKey: string;
  privateKeyEncrypted: string;
  keyNum: string | null;
  active: boolean;
  createdAt: Date;
  retiredAt: Date | null;
}

export function signingKeyRecord(r: SigningKeyRow): SigningKeyRecord {
  return {
    id: r.id,
    kid: r.kid,
    purpose: r.purpose,
    productId: r.productId,
    publicKeyHex: r.publicKey,
    privateKeyEncrypted: r.privateKeyEncrypted,
    keyNumHex: r.keyNum,
    active: r.active,
    createdAt: r.createdAt,
    retiredAt: r.retiredAt,
  };
}
