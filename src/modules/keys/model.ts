import { t } from "../../http/schema";

const PublicKeyHex = t.String({ pattern: "^[0-9a-f]{64}$", description: "The raw 32-byte Ed25519 public key, hex" });
const Kid = t.String({ description: "Key id, carried in tokens as the `kid` claim" });
const Pem = t.String({
  description:
    "The same public key as SPKI PEM, for node:crypto createPublicKey(pem) or, base64-decoded, WebCrypto importKey(\"spki\", der, { name: \"Ed25519\" }, …)",
});

/** GET /license/pubkey: the spec's three fields, plus kid and pem so a client needs no key wrapping of its own. */
export const PubkeySchema = t.Object(
  { algorithm: t.Literal("ed25519"), format: t.Literal("hex"), public_key: PublicKeyHex, kid: Kid, pem: Pem },
  { title: "LicensePublicKey" },
);

export const TrustedKeySchema = t.Object(
  {
    kid: Kid,
    algorithm: t.Literal("ed25519"),
    format: t.Literal("hex"),
    public_key: PublicKeyHex,
    pem: Pem,
    status: t.Union([t.Literal("active"), t.Literal("retired")]),
    created_at: t.String({ format: "date-time" }),
    retired_at: t.Union([t.String({ format: "date-time" }), t.Null()]),
  },
  { title: "LicenseTrustedKey" },
);
