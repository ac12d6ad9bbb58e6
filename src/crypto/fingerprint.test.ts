import { describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { fingerprint } from "./fingerprint";

describe("offline fingerprint (spec: Offline fingerprint; DECISIONS: fpr)", () => {
  test("first 16 hex characters of SHA-256 over '<identifier>:<product_id>' (vector from sha256sum)", () => {
    expect(fingerprint("device-1", "01a1fd3b-0000-7000-8000-000000000001")).toBe("1fc00769eaff53a3");
    // The identifier is used as given: no case folding (a device recomputes it byte for byte).
    expect(fingerprint("Alice@Example.com", "01a1fd3b-0000-7000-8000-000000000001")).toBe("021fa7854193e1f8");
  });

  test("matches the formula for arbitrary inputs and separates identifier from product", () => {
    for (const [id, pid] of [["a", "b"], ["machine:with:colons", "p"], ["ünïcode", "x"]] as const) {
      expect(fingerprint(id, pid)).toBe(createHash("sha256").update(`${id}:${pid}`, "utf8").digest("hex").slice(0, 16));
      expect(fingerprint(id, pid)).toMatch(/^[0-9a-f]{16}$/);
    }
    expect(fingerprint("a", "b")).not.toBe(fingerprint("b", "a"));
  });
});
