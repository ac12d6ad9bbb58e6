import { publicKeyPem } from "../../crypto/ed25519";
import { minisignKeyId } from "../../crypto/minisign";
import { minisignPublicKeyText, type ReleaseKeyEntry } from "./service";

/** Every public form a client needs (update-formats.md §1.3, §2.4, §3.1). Never any private material. */
export function presentReleaseKey(k: ReleaseKeyEntry) {
  const minisign = minisignPublicKeyText(k);
  return {
    kid: k.kid,
    active: k.active,
    created_at: k.createdAt.toISOString(),
    retired_at: k.retiredAt?.toISOString() ?? null,
    sparkle_public_key: Buffer.from(k.publicKey).toString("base64"),
    minisign_key_id: minisignKeyId(k.keyNum),
    minisign_public_key: minisign,
    tauri_public_key: Buffer.from(minisign, "utf8").toString("base64"),
    pem: publicKeyPem(k.publicKey),
  };
}
