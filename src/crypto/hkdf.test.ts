import { describe, expect, test } from "bun:test";
import { hkdf } from "@noble/hashes/hkdf.js";
import { sha256 } from "@noble/hashes/sha2.js";
import { deriveSubkey, KEY_PURPOSES, type KeyPurpose } from "./hkdf";

const master = new Uint8Array(32).map((_, i) => i);
const purposes = Object.keys(KEY_PURPOSES) as KeyPurpose[];

describe("HKDF-SHA256 subkeys (DECISIONS: Keys and secrets)", () => {
  test("vector (computed with an RFC 5869 implementation in Python)", () => {
    expect(Buffer.from(deriveSubkey(master, "licenseKeyLookup")).toString("hex")).toBe(
      "7b236ae909e947874038e5ed959cb7d14e21366e00355a7344b011bf27e56d6f",
    );
  });

  test("matches @noble/hashes hkdf for every purpose", () => {
    for (const p of purposes) {
      const expected = hkdf(sha256, master, new Uint8Array(0), new TextEncoder().encode(KEY_PURPOSES[p]), 32);
      expect(deriveSubkey(master, p)).toEqual(expected);
    }
  });

  test("every purpose has its own info string and its own 32-byte key", () => {
    expect(new Set(Object.values(KEY_PURPOSES)).size).toBe(purposes.length);
    const keys = purposes.map((p) => Buffer.from(deriveSubkey(master, p)).toString("hex"));
    expect(new Set(keys).size).toBe(purposes.length);
    for (const k of keys) expect(k).toMatch(/^[0-9a-f]{64}$/);
    // None equals the master key itself.
    expect(keys).not.toContain(Buffer.from(master).toString("hex"));
  });

  test("deterministic, and a different master key gives different subkeys", () => {
    const other = new Uint8Array(32).fill(7);
    for (const p of purposes) {
      expect(deriveSubkey(master, p)).toEqual(deriveSubkey(master, p));
      expect(deriveSubkey(other, p)).not.toEqual(deriveSubkey(master, p));
    }
  });

  test("refuses a master key that is not 32 bytes", () => {
    expect(() => deriveSubkey(new Uint8Array(16), "licenseKeyLookup")).toThrow();
    expect(() => deriveSubkey(new Uint8Array(33), "licenseKeyLookup")).toThrow();
  });
});
