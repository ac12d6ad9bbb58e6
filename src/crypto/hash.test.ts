import { describe, expect, test } from "bun:test";
import { createHash, createHmac, randomBytes } from "node:crypto";
import { constantTimeEqual, hmacSha256Hex, sha256Hex } from "./hash";

describe("hash helpers", () => {
  test("SHA-256 and HMAC-SHA256 known answers (FIPS 180-2, RFC 4231 case 2)", () => {
    expect(sha256Hex("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    expect(hmacSha256Hex(new TextEncoder().encode("Jefe"), "what do ya want for nothing?")).toBe(
      "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843",
    );
  });

  test("the same bytes as node:crypto for every length around the block sizes, text and bytes", () => {
    for (let n = 0; n <= 300; n++) {
      const bytes = randomBytes(n);
      const text = bytes.toString("latin1") + "é€"; // multi-byte UTF-8 too
      const key = randomBytes(n % 97);
      expect(sha256Hex(bytes)).toBe(createHash("sha256").update(bytes).digest("hex"));
      expect(sha256Hex(text)).toBe(createHash("sha256").update(text, "utf8").digest("hex"));
      expect(hmacSha256Hex(key, text)).toBe(createHmac("sha256", key).update(text, "utf8").digest("hex"));
      // Twice with the same key: the keyed state is copied, never consumed.
      expect(hmacSha256Hex(key, text)).toBe(createHmac("sha256", key).update(text, "utf8").digest("hex"));
    }
  });

  test("constantTimeEqual compares content and length", () => {
    expect(constantTimeEqual("abc", "abc")).toBe(true);
    expect(constantTimeEqual("abc", "abd")).toBe(false);
    expect(constantTimeEqual("abc", "abcd")).toBe(false);
    expect(constantTimeEqual("", "")).toBe(true);
  });
});
