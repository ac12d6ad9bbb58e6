import { describe, expect, test } from "bun:test";
import {
  generateLicenseKey,
  isWellFormedLicenseKey,
  LICENSE_KEY_ALPHABET,
  licenseKeyHint,
  licenseKeyLookupHash,
  normalizeLicenseKey,
} from "./license-key";

const N = 10_000;
const keys = Array.from({ length: N }, () => generateLicenseKey("KW"));

describe("license key format (DECISIONS: Keys and secrets)", () => {
  test("<PREFIX>-XXXXXXXX-XXXXXXXX-XXXXXXXX-XXXXXXXX over the 32-symbol alphabet", () => {
    expect(LICENSE_KEY_ALPHABET).toBe("ABCDEFGHJKLMNPQRSTUVWXYZ23456789");
    expect(new Set(LICENSE_KEY_ALPHABET).size).toBe(32);
    // No look-alikes a customer could mistype.
    for (const c of "01IO") expect(LICENSE_KEY_ALPHABET).not.toContain(c);
    for (const k of keys) {
      expect(k).toMatch(/^KW-[A-HJ-NP-Z2-9]{8}-[A-HJ-NP-Z2-9]{8}-[A-HJ-NP-Z2-9]{8}-[A-HJ-NP-Z2-9]{8}$/);
      expect(isWellFormedLicenseKey(k)).toBe(true);
    }
  });

  test("the prefix is configurable", () => {
    expect(generateLicenseKey("ACME42")).toMatch(/^ACME42(-[A-HJ-NP-Z2-9]{8}){4}$/);
  });

  test(`${N} keys are unique`, () => {
    expect(new Set(keys).size).toBe(N);
  });

  test("symbols are uniform (chi-square over 320,000 symbols, generous bound)", () => {
    const counts = new Map<string, number>([...LICENSE_KEY_ALPHABET].map((c) => [c, 0]));
    for (const k of keys) for (const c of k.slice(3).replaceAll("-", "")) counts.set(c, counts.get(c)! + 1);
    const total = N * 32;
    const expected = total / 32;
    const chi2 = [...counts.values()].reduce((sum, o) => sum + (o - expected) ** 2 / expected, 0);
    // 31 degrees of freedom: mean 31, P(chi2 > 80) ≈ 3e-6. A biased mapping (e.g. modulo of a
    // non-multiple, or a skipped symbol) lands in the thousands.
    expect(chi2).toBeLessThan(80);
    // Every position is used, too (a constant column would pass the global count).
    for (let pos = 0; pos < 32; pos++) {
      const seen = new Set(keys.map((k) => k.slice(3).replaceAll("-", "")[pos]));
      expect(seen.size).toBe(32);
    }
  });

  test("malformed keys are recognised", () => {
    for (const bad of ["", "KW", "KW-ABCDEFGH-JKLMNPQR-STUVWXYZ", "KW-ABCDEFG0-JKLMNPQR-STUVWXYZ-23456789", "KW-ABCDEFGH-JKLMNPQR-STUVWXYZ-234567891", "kw-abcdefgh-jklmnpqr-stuvwxyz-23456789", "KW_ABCDEFGH-JKLMNPQR-STUVWXYZ-23456789"]) {
      expect(isWellFormedLicenseKey(bad)).toBe(false);
    }
  });
});

describe("normalization", () => {
  test("trims and upper-cases what customers paste", () => {
    const k = "KW-ABCDEFGH-JKLMNPQR-STUVWXYZ-23456789";
    for (const input of [k, ` ${k} `, k.toLowerCase(), `\t${k.toLowerCase()}\n`]) {
      expect(normalizeLicenseKey(input)).toBe(k);
      expect(isWellFormedLicenseKey(normalizeLicenseKey(input))).toBe(true);
    }
  });

  test("the hint is the last four characters", () => {
    expect(licenseKeyHint("KW-ABCDEFGH-JKLMNPQR-STUVWXYZ-23456789")).toBe("6789");
  });
});

describe("lookup hash", () => {
  const subkey = new Uint8Array(32).map((_, i) => i);
  const key = "KW-ABCDEFGH-JKLMNPQR-STUVWXYZ-23456789";

  test("is HMAC-SHA256 of the normalized key (vector computed with Python's hmac module)", () => {
    expect(licenseKeyLookupHash(subkey, key)).toBe("ba2f2a541ed9041f9c87fbeaa62ed29784c28ca333be8d0cdf60ec1b759357e3");
  });

  test("is deterministic and insensitive to case and surrounding space", () => {
    const h = licenseKeyLookupHash(subkey, key);
    expect(licenseKeyLookupHash(subkey, key)).toBe(h);
    expect(licenseKeyLookupHash(subkey, ` ${key.toLowerCase()} `)).toBe(h);
  });

  test("depends on the subkey and on every character of the key", () => {
    const h = licenseKeyLookupHash(subkey, key);
    expect(licenseKeyLookupHash(new Uint8Array(32).fill(1), key)).not.toBe(h);
    expect(licenseKeyLookupHash(subkey, key.slice(0, -1) + "8")).not.toBe(h);
    expect(h).not.toContain(key.toLowerCase().replaceAll("-", ""));
  });
});
