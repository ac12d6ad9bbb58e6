// The secrets of an endpoint: the `whsec_…` signing secret (24 random bytes, base64, as Standard
// Webhooks libraries expect) and the optional Ed25519 seed of the `v1a` signature, both sealed with
// AES-256-GCM under the webhookSecretEncryption subkey, bound to the endpoint id and the field.
import { randomBytes } from "node:crypto";
import { openText, seal } from "../../crypto/aead";
import { createSigner, generateSeed, publicKeyFromSeed } from "../../crypto/ed25519";
import type { Secrets } from "../keys/secrets";

type Field = "secret" | "previous_secret" | "signing_key";
const aad = (endpointId: string, field: Field) => `keyward/v1/webhook:${endpointId}:${field === "previous_secret" ? "secret" : field}`;

export function newWebhookSecret(): string {
  return `whsec_${randomBytes(24).toString("base64")}`;
}

export function sealSecret(secrets: Secrets, endpointId: string, secret: string): string {
  return seal(secrets.subkey("webhookSecretEncryption"), secret, aad(endpointId, "secret"));
}

export function openSecret(secrets: Secrets, endpointId: string, sealed: string): string {
  return openText(secrets.subkey("webhookSecretEncryption"), sealed, aad(endpointId, "secret"));
}

/** A new Ed25519 key for `v1a`: the sealed seed and the public key (`whpk_` + base64 of the 32 raw bytes). */
export function newSigningKey(secrets: Secrets, endpointId: string): { sealed: string; publicKey: string } {
  const seed = generateSeed();
  return {
    sealed: seal(secrets.subkey("webhookSecretEncryption"), Buffer.from(seed).toString("base64"), aad(endpointId, "signing_key")),
    publicKey: Buffer.from(publicKeyFromSeed(seed)).toString("base64"),
  };
}

/** `v1a,<base64 Ed25519 signature>` of the signed content. */
export function v1aSignature(secrets: Secrets, endpointId: string, sealedSeed: string, content: string): string {
  const seed = Buffer.from(openText(secrets.subkey("webhookSecretEncryption"), sealedSeed, aad(endpointId, "signing_key")), "base64");
  return `v1a,${Buffer.from(createSigner(new Uint8Array(seed)).sign(content)).toString("base64")}`;
}

/** The public key as shown to admins: `whpk_` + base64. */
export const presentPublicKey = (raw: string | null) => (raw === null ? null : `whpk_${raw}`);
