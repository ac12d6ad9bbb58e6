// License keys: <PREFIX>-XXXXXXXX-XXXXXXXX-XXXXXXXX-XXXXXXXX over a 32-symbol alphabet without
// look-alikes (no 0/O/1/I). 32 symbols × 32 characters = 160 bits of entropy.
import { randomBytes } from "node:crypto";
import { hmacSha256Hex } from "./hash";

export const LICENSE_KEY_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789";
const GROUPS = 4;
const GROUP_LEN = 8;

export function generateLicenseKey(prefix: string): string {
  const chars: string[] = [];
  // Rejection sampling keeps every symbol uniform: 256 is a multiple of 32, so every byte is
  // usable after masking; the loop stays for alphabets whose size does not divide 256.
  const limit = 256 - (256 % LICENSE_KEY_ALPHABET.length);
  while (chars.length < GROUPS * GROUP_LEN) {
    for (const b of randomBytes(64)) {
      if (b >= limit) continue;
      chars.push(LICENSE_KEY_ALPHABET[b % LICENSE_KEY_ALPHABET.length]!);
      if (chars.length === GROUPS * GROUP_LEN) break;
    }
  }
  const groups: string[] = [];
  for (let i = 0; i < GROUPS; i++) groups.push(chars.slice(i * GROUP_LEN, (i + 1) * GROUP_LEN).join(""));
  return `${prefix}-${groups.join("-")}`;
}

/** Trim and upper-case; users paste keys from emails with stray spaces and lower case. */
export function normalizeLicenseKey(input: string): string {
  return input.trim().toUpperCase();
}

const SHAPE = new RegExp(`^[A-Z0-9]{1,8}(-[${LICENSE_KEY_ALPHABET}]{${GROUP_LEN}}){${GROUPS}}$`);
export function isWellFormedLicenseKey(normalized: string): boolean {
  return SHAPE.test(normalized);
}

/** Deterministic lookup hash (HMAC-SHA256 under a subkey): indexable, useless without the master key. */
export function licenseKeyLookupHash(lookupKey: Uint8Array, key: string): string {
  return hmacSha256Hex(lookupKey, normalizeLicenseKey(key));
}

/** Last group, shown to admins and customers to tell keys apart without revealing them. */
export function licenseKeyHint(key: string): string {
  return key.slice(-4);
}
