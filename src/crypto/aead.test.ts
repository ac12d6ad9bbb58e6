import { describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { open, openText, seal } from "./aead";

const key = new Uint8Array(randomBytes(32));

/** Flips one bit of the decoded part `index` (1 = nonce, 2 = ciphertext‖tag) at byte `at`. */
function tamper(sealed: string, index: 1 | 2, at: (length: number) => number): string {
  const parts = sealed.split(".");
  const bytes = Buffer.from(parts[index]!, "base64url");
  bytes[at(bytes.length)]! ^= 0x01;
  parts[index] = bytes.toString("base64url");
  return parts.join(".");
}

describe("AES-256-GCM sealing (row id as AAD)", () => {
  test("round trip, for text and bytes of many lengths", () => {
    for (const len of [0, 1, 15, 16, 17, 32, 1000]) {
      const data = new Uint8Array(randomBytes(len));
      expect(open(key, seal(key, data, "row-1"), "row-1")).toEqual(data);
    }
    expect(openText(key, seal(key, "KW-ABCDEFGH-JKLMNPQR-STUVWXYZ-23456789", "lic-1"), "lic-1")).toBe("KW-ABCDEFGH-JKLMNPQR-STUVWXYZ-23456789");
  });

  test("format: v1.<nonce>.<ciphertext‖tag>, base64url, 96-bit nonce, 128-bit tag", () => {
    const sealed = seal(key, "hello", "aad");
    const [v, nonce, body] = sealed.split(".");
    expect(v).toBe("v1");
    expect(Buffer.from(nonce!, "base64url").length).toBe(12);
    expect(Buffer.from(body!, "base64url").length).toBe(5 + 16);
    expect(sealed).not.toContain("hello");
  });

  test("a fresh nonce every time: sealing the same plaintext twice differs", () => {
    const seen = new Set(Array.from({ length: 100 }, () => seal(key, "same", "aad")));
    expect(seen.size).toBe(100);
  });

  test("a different AAD (ciphertext moved to another row) fails", () => {
    expect(() => open(key, seal(key, "secret", "row-1"), "row-2")).toThrow();
  });

  test("a different key fails", () => {
    expect(() => open(new Uint8Array(randomBytes(32)), seal(key, "secret", "row-1"), "row-1")).toThrow();
  });

  test("tampering with the nonce, the ciphertext or the tag fails", () => {
    const sealed = seal(key, "a secret worth protecting", "row-1");
    expect(() => open(key, tamper(sealed, 1, () => 0), "row-1")).toThrow();
    expect(() => open(key, tamper(sealed, 2, () => 0), "row-1")).toThrow(); // ciphertext
    expect(() => open(key, tamper(sealed, 2, (n) => n - 1), "row-1")).toThrow(); // tag
  });

  test("malformed input is refused", () => {
    for (const bad of ["", "v1", "v2.AAAA.BBBB", "v1..", "v1.AAAA.BBBB", `v1.${Buffer.alloc(12).toString("base64url")}.AAAA`]) {
      expect(() => open(key, bad, "row-1")).toThrow();
    }
  });
});
