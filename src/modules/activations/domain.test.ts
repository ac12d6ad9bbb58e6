import { describe, expect, test } from "bun:test";
import { lastSeenDue, onlineTokenClaims, onlineTokenExpiry } from "./domain";
import { sha256Hex } from "../../crypto/hash";
import type { LicenseAccess } from "../license-api/repo";

const iat = Date.parse("2026-11-21T08:00:00Z") / 1000;
const WEEK = 7 * 86400;

describe("online token expiry", () => {
  test("iat + TTL without an expiry", () => {
    expect(onlineTokenExpiry(iat, WEEK, null, 0)).toBe(iat + WEEK);
  });
  test("capped at valid_until + grace days", () => {
    const validUntil = new Date("2026-11-23T00:00:00Z");
    expect(onlineTokenExpiry(iat, WEEK, validUntil, 0)).toBe(validUntil.getTime() / 1000);
    expect(onlineTokenExpiry(iat, WEEK, validUntil, 2)).toBe(validUntil.getTime() / 1000 + 2 * 86400);
    expect(onlineTokenExpiry(iat, WEEK, validUntil, 30)).toBe(iat + WEEK);
  });
});

describe("claims", () => {
  test("carry every DECISIONS claim with the fingerprint formula", () => {
    const access = {
      license: {
        id: "lic",
        productId: "prod",
        status: "active",
        validUntil: null,
        supportUntil: new Date("2027-01-01T00:00:00Z"),
      },
      plan: { id: "plan", graceDays: 3 },
    } as unknown as LicenseAccess;
    const c = onlineTokenClaims({ access, identifier: "dev-1", features: { a: true }, now: new Date(iat * 1000 + 999), ttlSeconds: 60, kid: "k", nonce: "n" });
    expect(c).toEqual({
      lid: "lic",
      pid: "prod",
      pln: "plan",
      sts: "active",
      idn: "dev-1",
      fpr: sha256Hex("dev-1:prod").slice(0, 16),
      ftr: { a: true },
      iat,
      exp: iat + 60,
      sup: Date.parse("2027-01-01T00:00:00Z") / 1000,
      grc: 3,
      nce: "n",
      kid: "k",
    });
  });
});

describe("last-seen throttle", () => {
  const now = new Date("2026-11-21T08:00:00Z");
  test("writes when never seen or the interval has passed", () => {
    expect(lastSeenDue(null, now, 900_000)).toBe(true);
    expect(lastSeenDue(new Date(now.getTime() - 900_000), now, 900_000)).toBe(true);
    expect(lastSeenDue(new Date(now.getTime() - 899_999), now, 900_000)).toBe(false);
  });
});
