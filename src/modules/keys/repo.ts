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
   * Takes the turn of (purpose, product) until the unit of work ends: activations of its keys run
   * one after another on every node. By name, since at a first start there is no key row to lock.
   */
  lockScope(purpose: SigningKeyPurpose, productId: string | null): Promise<void>;
  /** Marks the key retired at `at` (inactive, still listed). */
  retire(id: string, at: Date): Promise<void>;
  /** Makes a retired key's row active again. */
  revive(id: string): Promise<void>;
  /** Inserts the key, active. */
  insert(record: SigningKeyRecord): Promise<void>;
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
