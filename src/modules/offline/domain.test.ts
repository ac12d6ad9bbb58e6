import { expect, test } from "bun:test";
import type { License } from "../licenses/repo";
import type { Plan } from "../plans/repo";
import { offlineAccessOf, planOfflineIssue, planSelfServiceActivation } from "./domain";
import { planValue } from "../../../test/support/plan-value";
import type { OfflineAccess, OfflineActivation } from "./repo";

const NOW = new Date("2026-06-01T00:00:00.000Z");
const DAY = 86_400_000;

const license = (over: Partial<License> = {}): License => ({
  id: "lic-1",
  productId: "prod-1",
  planId: "plan-1",
  keyHash: "h",
  keyEncrypted: "sealed",
  keyHint: "ABCD",
  email: "owner@example.com",
  status: "active",
  priorStatus: null,
  validUntil: null,
  supportUntil: null,
  pastDueSince: null,
  externalCustomerId: null,
  externalWorkspaceId: null,
  createdAt: NOW,
  updatedAt: NOW,
  ...over,
});
// The tests' one plan factory, with this file's ids, name and the values its assertions read.
const plan = (over: Partial<Plan> = {}): Plan => planValue("prod-1", NOW, { id: "plan-1", name: "Pro", graceDays: 3, maxActivations: 2, ...over });
const access = (l: Partial<License> = {}, p: Partial<Plan> = {}): OfflineAccess => offlineAccessOf(license(l), plan(p));
const live: OfflineActivation = {
  id: "oa-1",
  licenseId: "lic-1",
  identifier: "box",
  fingerprint: "0123456789abcdef",
  expiresAt: null,
  createdAt: NOW,
  createdBy: null,
  clearedAt: null,
  clearedBy: null,
};
const refusal = (p: { kind: string; error?: { code: string } }) => (p.kind === "refuse" ? p.error!.code : p.kind);

test("offlineAccessOf keeps the public API's columns and the plan's setting, not the key's secrets", () => {
  const a = access({}, { portalOfflineActivation: false });
  expect(a.plan.portalOfflineActivation).toBe(false);
  expect(a.license).not.toHaveProperty("keyEncrypted");
  expect(a.license).not.toHaveProperty("email");
  expect(a.plan).not.toHaveProperty("purchasePriceId");
  expect(a).toMatchObject({ license: { id: "lic-1", status: "active", planId: "plan-1" }, plan: { id: "plan-1", graceDays: 3, floating: false } });
});

test("an issue: NOT_FOUND without the license; an admin's by the license's status with the admin's expiry", () => {
  expect(refusal(planOfflineIssue(null, { kind: "admin", exp: 0 }, NOW))).toBe("NOT_FOUND");
  expect(planOfflineIssue(access(), { kind: "admin", exp: 123 }, NOW)).toEqual({ kind: "sign", access: access(), exp: 123 });
  expect(refusal(planOfflineIssue(access({ status: "suspended" }), { kind: "admin", exp: 0 }, NOW))).toBe("INVALID_TRANSITION");
  // Past valid_until + grace_days: refused before the lifecycle pass marks it expired.
  expect(refusal(planOfflineIssue(access({ validUntil: new Date(NOW.getTime() - 4 * DAY) }), { kind: "admin", exp: 0 }, NOW))).toBe("INVALID_TRANSITION");
  // An admin may issue whatever the plan's portal setting.
  expect(planOfflineIssue(access({}, { portalOfflineActivation: false }), { kind: "admin", exp: 0 }, NOW).kind).toBe("sign");
});

test("a self-service issue: the portal's rules, expiring with the license", () => {
  const until = new Date(NOW.getTime() + 10 * DAY);
  expect(planOfflineIssue(access({ validUntil: until }), { kind: "self-service" }, NOW)).toMatchObject({ kind: "sign", exp: Math.floor((until.getTime() + 3 * DAY) / 1000) });
  expect(planOfflineIssue(access(), { kind: "self-service" }, NOW)).toMatchObject({ kind: "sign", exp: 0 });
  expect(refusal(planOfflineIssue(access({}, { portalOfflineActivation: false }), { kind: "self-service" }, NOW))).toBe("FORBIDDEN");
  expect(refusal(planOfflineIssue(access({}, { floating: true }), { kind: "self-service" }, NOW))).toBe("FORBIDDEN");
  expect(refusal(planOfflineIssue(access({ status: "revoked" }), { kind: "self-service" }, NOW))).toBe("INVALID_TRANSITION");
});

test("a self-service activation: taken while one stands (before the license's rules), else as a self-service issue", () => {
  expect(refusal(planSelfServiceActivation(null, null, NOW))).toBe("NOT_FOUND");
  expect(planSelfServiceActivation(access(), live, NOW)).toEqual({ kind: "taken", existing: live });
  expect(planSelfServiceActivation(access({ status: "suspended" }), live, NOW)).toEqual({ kind: "taken", existing: live });
  expect(planSelfServiceActivation(access(), null, NOW)).toEqual({ kind: "sign", access: access(), exp: 0 });
  expect(refusal(planSelfServiceActivation(access({ status: "suspended" }), null, NOW))).toBe("INVALID_TRANSITION");
  expect(refusal(planSelfServiceActivation(access({}, { portalOfflineActivation: false }), null, NOW))).toBe("FORBIDDEN");
});
