import { describe, expect, test } from "bun:test";
import { createHmac } from "node:crypto";
import { afterFailedAttempt, claimWindow, endpointWants, eventProductId, filterProblem, matchesFilters, pickDeliveries, previousSecretLive, v1Signature } from "./domain";

describe("filters", () => {
  test("exact, prefix and * match; nothing else does", () => {
    expect(matchesFilters(["license.*"], "license.revoked")).toBe(true);
    expect(matchesFilters(["license.*"], "licenses.revoked")).toBe(false);
    expect(matchesFilters(["release.published"], "release.published")).toBe(true);
    expect(matchesFilters(["release.published"], "release.yanked")).toBe(false);
    expect(matchesFilters(["*"], "quota.warning")).toBe(true);
    expect(matchesFilters([], "quota.warning")).toBe(false);
  });

  test("only known types and families are accepted", () => {
    expect(filterProblem("*")).toBeNull();
    expect(filterProblem("license.*")).toBeNull();
    expect(filterProblem("floating.checked_out")).toBeNull();
    expect(filterProblem("webhook.test")).toBeNull();
    expect(filterProblem("license.exploded")).toContain("unknown event type");
    expect(filterProblem("widgets.*")).toContain("no event type starts with");
    expect(filterProblem("License.*")).toContain("is not an event type");
    expect(filterProblem("license.**")).toContain("is not an event type");
  });

  test("a product-scoped endpoint wants only its product's events; a disabled one none", () => {
    const e = { enabled: true, events: ["*"], productId: "p1" };
    expect(endpointWants(e, "license.created", "p1")).toBe(true);
    expect(endpointWants(e, "license.created", "p2")).toBe(false);
    expect(endpointWants(e, "license.created", null)).toBe(false);
    expect(endpointWants({ ...e, productId: null }, "license.created", null)).toBe(true);
    expect(endpointWants({ ...e, enabled: false }, "license.created", "p1")).toBe(false);
    expect(eventProductId({ type: "x", data: { product_id: "p9" } })).toBe("p9");
    expect(eventProductId({ data: {} })).toBeNull();
  });
});

test("v1 is base64 HMAC-SHA256 of id.timestamp.body under the whsec_ key bytes", () => {
  const key = Buffer.alloc(24, 7);
  const secret = `whsec_${key.toString("base64")}`;
  const expected = createHmac("sha256", key).update("msg_1.1700000000.{}").digest("base64");
  expect(v1Signature(secret, "msg_1.1700000000.{}")).toBe(`v1,${expected}`);
});

test("the previous secret signs until its expiry only", () => {
  const e = { previousSecretEncrypted: "v1.x", previousSecretExpiresAt: new Date("2026-11-22T08:00:00Z") };
  expect(previousSecretLive(e, new Date("2026-11-22T07:59:59Z"))).toBe(true);
  expect(previousSecretLive(e, new Date("2026-11-22T08:00:00Z"))).toBe(false);
  expect(previousSecretLive({ previousSecretEncrypted: null, previousSecretExpiresAt: null }, new Date())).toBe(false);
});

describe("pickDeliveries", () => {
  const due = (id: string, endpointId: string, ms: number) => ({ id, endpointId, nextAttemptAt: new Date(ms) });
  const candidates = [due("s1", "slow", 1), due("s2", "slow", 2), due("s3", "slow", 3), due("h1", "healthy", 10), due("o1", "other", 5)];

  test("oldest due first, within the limit and each endpoint's free room", () => {
    expect(pickDeliveries(candidates, { limit: 10, perEndpoint: 2 })).toEqual(["s1", "s2", "o1", "h1"]);
    expect(pickDeliveries(candidates, { limit: 3, perEndpoint: 2 })).toEqual(["s1", "s2", "o1"]);
    // The slow endpoint's requests in flight count against its room, not against the others'.
    expect(pickDeliveries(candidates, { limit: 10, perEndpoint: 2, inFlight: new Map([["slow", 2]]) })).toEqual(["o1", "h1"]);
    expect(pickDeliveries(candidates, { limit: 10, perEndpoint: 2, inFlight: new Map([["slow", 1]]) })).toEqual(["s1", "o1", "h1"]);
  });

  test("the claim's window is an endpoint's room with nothing in flight, never more than the limit; what is in flight is counted when picking", () => {
    expect(claimWindow({ limit: 50, perEndpoint: 8 })).toBe(8);
    expect(claimWindow({ limit: 2, perEndpoint: 8 })).toBe(2);
    const slow = [due("s1", "slow", 1), due("s2", "slow", 2), due("s3", "slow", 3), due("s4", "slow", 4), due("s5", "slow", 5), due("s6", "slow", 6)];
    // 3 of 8 in flight: 5 more at most, out of the window's 8.
    expect(claimWindow({ limit: 50, perEndpoint: 8, inFlight: new Map([["slow", 3]]) })).toBe(8);
    expect(pickDeliveries(slow, { limit: 50, perEndpoint: 8, inFlight: new Map([["slow", 3]]) })).toEqual(["s1", "s2", "s3", "s4", "s5"]);
    // Past its room (9 of 8 in flight): none.
    expect(pickDeliveries(slow, { limit: 50, perEndpoint: 8, inFlight: new Map([["slow", 9]]) })).toEqual([]);
  });
});

describe("afterFailedAttempt", () => {
  const at = new Date("2026-11-22T08:00:00Z");
  const retry = { at, disable: null };

  test("a failure counts one more in a row; below the threshold nothing else changes", () => {
    expect(afterFailedAttempt({ enabled: true, consecutiveFailures: 0 }, retry, 20)).toEqual({ changes: { consecutiveFailures: 1 }, disabled: null });
    expect(afterFailedAttempt({ enabled: true, consecutiveFailures: 18 }, retry, 20)).toEqual({ changes: { consecutiveFailures: 19 }, disabled: null });
  });

  test("the failure that reaches the threshold disables the endpoint (failures), at the attempt's time", () => {
    expect(afterFailedAttempt({ enabled: true, consecutiveFailures: 19 }, retry, 20)).toEqual({
      changes: { consecutiveFailures: 20, enabled: false, disabledReason: "failures", disabledAt: at, updatedAt: at },
      disabled: "failures",
    });
    // Past it too (>=, not ==).
    expect(afterFailedAttempt({ enabled: true, consecutiveFailures: 25 }, retry, 20).disabled).toBe("failures");
  });

  test("a 410 disables at once (gone), whatever the count", () => {
    expect(afterFailedAttempt({ enabled: true, consecutiveFailures: 0 }, { at, disable: "gone" }, 20)).toEqual({
      changes: { consecutiveFailures: 1, enabled: false, disabledReason: "gone", disabledAt: at, updatedAt: at },
      disabled: "gone",
    });
  });

  test("an endpoint disabled already is only counted: no second disable, no second email", () => {
    expect(afterFailedAttempt({ enabled: false, consecutiveFailures: 20 }, retry, 20)).toEqual({ changes: { consecutiveFailures: 21 }, disabled: null });
    expect(afterFailedAttempt({ enabled: false, consecutiveFailures: 3 }, { at, disable: "gone" }, 20)).toEqual({ changes: { consecutiveFailures: 4 }, disabled: null });
  });
});
