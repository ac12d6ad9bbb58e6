// minisign public-key and signature files, byte for byte as update-formats.md §3.1 describes them
// (jedisct1/minisign src/minisign.h): Tauri's updater verifies these (§2.4–2.5), and `minisign -V`
// accepts them (minisign.test.ts). We only ever write the prehashed `ED` form: the signed message is
// BLAKE2b-512 of the file, which stream-hash.ts computes in the same pass as SHA-256.
import type { Ed25519Signer } from "./ed25519";

export const MINISIGN_UNTRUSTED_COMMENT = "signature from keyward secret key";

/** minisign shows the key id as `%016PRIX64` of le64(keynum): the 8 bytes reversed, upper-case hex. */
export function minisignKeyId(keyNum: Uint8Array): string {
  if (keyNum.length !== 8) throw new RangeError("minisign key number must be 8 bytes");
  return Buffer.from(keyNum).reverse().toString("hex").toUpperCase();
}

/** Public-key file: `untrusted comment: …\n` + base64("Ed" ‖ keynum ‖ pk) + `\n`. */
export function minisignPublicKeyFile(keyNum: Uint8Array, publicKey: Uint8Array): string {
  if (publicKey.length !== 32) throw new RangeError("Ed25519 public key must be 32 bytes");
  const struct = Buffer.concat([Buffer.from("Ed", "ascii"), minisignKeyNum(keyNum), publicKey]);
  return `untrusted comment: minisign public key ${minisignKeyId(keyNum)}\n${struct.toString("base64")}\n`;
}

function minisignKeyNum(keyNum: Uint8Array): Uint8Array {
  if (keyNum.length !== 8) throw new RangeError("minisign key number must be 8 bytes");
  return keyNum;
}

/**
 * A value allowed inside the trusted comment: printable, no TAB (it separates the fields), no CR/LF
 * (minisign rejects them, §3.2). Non-ASCII UTF-8 is kept as is.
 */
export function isTrustedCommentValue(v: string): boolean {
  return v.length > 0 && !/[\u0000-\u001f\u007f]/.test(v);
}

/**
 * `timestamp:<unix>\tfile:<filename>\tversion:<version>` (DECISIONS: Releases and storage). Recent
 * tauri-plugin-updater compares `version:` with the announced version (§2.5).
 */
export function releaseTrustedComment(input: { timestamp: number; filename: string; version: string }): string {
  if (!Number.isSafeInteger(input.timestamp) || input.timestamp < 0) throw new RangeError("timestamp must be unix seconds");
  if (!isTrustedCommentValue(input.filename)) throw new RangeError("filename cannot go into a minisign trusted comment");
  if (!isTrustedCommentValue(input.version)) throw new RangeError("version cannot go into a minisign trusted comment");
  const text = `timestamp:${input.timestamp}\tfile:${input.filename}\tversion:${input.version}`;
  // minisign keeps trusted comments below 8192 bytes including the "trusted comment: " prefix (§3.2).
  if (Buffer.byteLength(text) + "trusted comment: ".length >= 8192) throw new RangeError("trusted comment too long");
  return text;
}

/**
 * The 4-line prehashed (`ED`) signature file, each line `\n`-terminated:
 *   untrusted comment: <text>
 *   base64("ED" ‖ keynum ‖ Ed25519(sk, BLAKE2b-512(file)))
 *   trusted comment: <trustedComment>
 *   base64(Ed25519(sk, signature ‖ trustedComment))
 */
export function minisignSignatureFile(input: {
  signer: Pick<Ed25519Signer, "sign">;
  keyNum: Uint8Array;
  blake2b512: Uint8Array;
  trustedComment: string;
  untrustedComment?: string;
}): string {
  if (input.blake2b512.length !== 64) throw new RangeError("BLAKE2b-512 digest must be 64 bytes");
  const untrusted = input.untrustedComment ?? MINISIGN_UNTRUSTED_COMMENT;
  if (/[\r\n]/.test(untrusted) || /[\r\n]/.test(input.trustedComment)) throw new RangeError("comments are single lines");
  const signature = input.signer.sign(input.blake2b512);
  const struct = Buffer.concat([Buffer.from("ED", "ascii"), minisignKeyNum(input.keyNum), signature]);
  const global = input.signer.sign(Buffer.concat([signature, Buffer.from(input.trustedComment, "utf8")]));
  return (
    `untrusted comment: ${untrusted}\n` +
    `${struct.toString("base64")}\n` +
    `trusted comment: ${input.trustedComment}\n` +
    `${Buffer.from(global).toString("base64")}\n`
  );
}
