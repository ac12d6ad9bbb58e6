// Subkeys derived from the master key with HKDF-SHA256, one distinct `info` per use
// (DECISIONS: Keys and secrets), so a leak of one subkey says nothing about another.
import { hkdfSync } from "node:crypto";

export const KEY_PURPOSES = {
  licenseKeyLookup: "keyward/v1/license-key-lookup",
  licenseKeyEncryption: "keyward/v1/license-key-encryption",
  signingKeyEncryption: "keyward/v1/signing-key-encryption",
  webhookSecretEncryption: "keyward/v1/webhook-secret-encryption",
  storageUrlSigning: "keyward/v1/storage-url-signing",
  secretLookup: "keyward/v1/secret-lookup",
  idempotencyResponseEncryption: "keyward/v1/idempotency-response-encryption",
  sessionTokenLookup: "keyward/v1/session-token-lookup",
  inviteTokenLookup: "keyward/v1/invite-token-lookup",
  signInCodeHash: "keyward/v1/sign-in-code-hash",
  signInAttemptLookup: "keyward/v1/sign-in-attempt-lookup",
  outboxSecretEncryption: "keyward/v1/outbox-secret-encryption",
  oauthFlowEncryption: "keyward/v1/oauth-flow-encryption",
} as const;

export type KeyPurpose = keyof typeof KEY_PURPOSES;

export function deriveSubkey(master: Uint8Array, purpose: KeyPurpose): Uint8Array {
  if (master.length !== 32) throw new Error("master key must be 32 bytes");
  return new Uint8Array(hkdfSync("sha256", master, new Uint8Array(0), KEY_PURPOSES[purpose], 32));
}
