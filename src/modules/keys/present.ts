import { publicKeyPem } from "../../crypto/ed25519";
import type { ActiveSigningKey } from "./service";
import type { SigningKeyRecord } from "./repo";

export function presentPubkey(k: ActiveSigningKey) {
  return { algorithm: "ed25519" as const, format: "hex" as const, public_key: k.publicKeyHex, kid: k.kid, pem: k.pem };
}

export function presentTrustedKey(k: SigningKeyRecord) {
  return {
    kid: k.kid,
    algorithm: "ed25519" as const,
    format: "hex" as const,
    public_key: k.publicKeyHex,
    pem: publicKeyPem(Buffer.from(k.publicKeyHex, "hex")),
    status: k.active ? ("active" as const) : ("retired" as const),
    created_at: k.createdAt.toISOString(),
    retired_at: k.retiredAt?.toISOString() ?? null,
  };
}
