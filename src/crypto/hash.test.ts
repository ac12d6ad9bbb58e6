import { describe, expect, test } from "bun:test";
import { constantTimeEqual, hmacSha256Hex, sha256Hex } from "./hash";

describe("hash helpers", () => {
  test("SHA-256 and HMAC-SHA256 known answers (FIPS 180-2, RFC 4231 case 2)", () => {
    expect(sha256Hex("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    expect(hmacSha256Hex(new TextEncoder().encode("Jefe"), "what do ya want for nothing?")).toBe(
      "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843",
    );
  });

  test("constantTimeEqual compares content and length", () => {
    expect(constantTimeEqual("abc", "abc")).toBe(true);
    expect(constantTimeEqual("abc", "abd")).toBe(false);
    expect(constantTimeEqual("abc", "abcd")).toBe(false);
    expect(constantTimeEqual("", "")).toBe(true);
  });
});
