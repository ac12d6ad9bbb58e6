import { t } from "../../http/schema";

export const ProductIdParams = t.Object({ id: t.String({ description: "Product id" }) });

export const ReleaseKeySchema = t.Object(
  {
    kid: t.String({ description: "Key id (first 16 hex of SHA-256 of the public key); artifacts record which kid signed them" }),
    active: t.Boolean({ description: "true for the key that signs new publishes; retired keys stay listed" }),
    created_at: t.String({ format: "date-time" }),
    retired_at: t.Union([t.String({ format: "date-time" }), t.Null()]),
    sparkle_public_key: t.String({ description: "Sparkle/WinSparkle SUPublicEDKey: base64 of the raw 32-byte Ed25519 key" }),
    minisign_key_id: t.String({ pattern: "^[0-9A-F]{16}$", description: "minisign key id as the minisign tool prints it" }),
    minisign_public_key: t.String({ description: "minisign public key file text (2 lines, \\n-terminated)" }),
    tauri_public_key: t.String({ description: "tauri.conf.json plugins.updater.pubkey: base64 of minisign_public_key" }),
    pem: t.String({ description: "SPKI PEM of the Ed25519 public key (OpenSSL, node:crypto)" }),
  },
  { additionalProperties: false },
);
