import { describe, expect, test } from "bun:test";
import { NONCE_BYTES, tokenNonce } from "./nonce";

describe("token nonces", () => {
  test("12 bytes of base64url, never repeated across several refills of the pool", () => {
    const seen = new Set<string>();
    for (let i = 0; i < 2000; i++) {
      const nonce = tokenNonce();
      expect(nonce).toMatch(/^[A-Za-z0-9_-]{16}$/);
      expect(Buffer.from(nonce, "base64url").length).toBe(NONCE_BYTES);
      seen.add(nonce);
    }
    expect(seen.size).toBe(2000);
  });
});
