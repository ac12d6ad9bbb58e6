// AES-256-GCM with a random 96-bit nonce; the row id is bound as additional authenticated data so
// a ciphertext copied into another row fails to decrypt.
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";

const VERSION = "v1";

export function seal(key: Uint8Array, plaintext: Uint8Array | string, aad: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  cipher.setAAD(Buffer.from(aad, "utf8"));
  const data = typeof plaintext === "string" ? Buffer.from(plaintext, "utf8") : plaintext;
  const ct = Buffer.concat([cipher.update(data), cipher.final()]);
  const tag = cipher.getAuthTag();
  return `${VERSION}.${iv.toString("base64url")}.${Buffer.concat([ct, tag]).toString("base64url")}`;
}

export function open(key: Uint8Array, sealed: string, aad: string): Uint8Array {
  const [version, ivPart, body] = sealed.split(".");
  if (version !== VERSION || !ivPart || !body) throw new Error("unsupported ciphertext format");
  const iv = Buffer.from(ivPart, "base64url");
  const raw = Buffer.from(body, "base64url");
  if (iv.length !== 12 || raw.length < 16) throw new Error("malformed ciphertext");
  const decipher = createDecipheriv("aes-256-gcm", key, iv);
  decipher.setAAD(Buffer.from(aad, "utf8"));
  decipher.setAuthTag(raw.subarray(raw.length - 16));
  return new Uint8Array(Buffer.concat([decipher.update(raw.subarray(0, raw.length - 16)), decipher.final()]));
}

export function openText(key: Uint8Array, sealed: string, aad: string): string {
  return Buffer.from(open(key, sealed, aad)).toString("utf8");
}
