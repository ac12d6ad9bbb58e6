import { describe, expect, test } from "bun:test";
import { assertNotRevoked, billingStatusOf, billingTransition, isUsable, transition, trialExpiryError, type LicenseAction } from "./domain";
import type { LicenseStatus } from "./repo";
import { AppError } from "../../shared/errors";

const ALL: LicenseStatus[] = ["active", "trialing", "past_due", "canceled", "expired", "suspended", "revoked"];

// Expected result of each (from, action): a status, or null for 409 INVALID_TRANSITION.
const TABLE: Record<LicenseStatus, Record<LicenseAction, LicenseStatus | null>> = {
  active: { revoke: "revoked", suspend: "suspended", reinstate: null },
  trialing: { revoke: "revoked", suspend: "suspended", reinstate: null },
  past_due: { revoke: "revoked", suspend: "suspended", reinstate: null },
  canceled: { revoke: "revoked", suspend: null, reinstate: "active" },
  expired: { revoke: "revoked", suspend: null, reinstate: "active" },
  suspended: { revoke: "revoked", suspend: null, reinstate: "active" },
  revoked: { revoke: null, suspend: null, reinstate: null },
};

describe("license transitions", () => {
  for (const from of ALL) {
    for (const action of ["revoke", "suspend", "reinstate"] as LicenseAction[]) {
      const expected = TABLE[from][action];
      test(`${action} from ${from} → ${expected ?? "409 INVALID_TRANSITION"}`, () => {
        if (expected === null) {
          let err: unknown;
          try {
            transition({ status: from, priorStatus: null }, action);
          } catch (e) {
            err = e;
          }
          expect(err).toBeInstanceOf(AppError);
          expect((err as AppError).code).toBe("INVALID_TRANSITION");
        } else {
          expect(transition({ status: from, priorStatus: null }, action).status).toBe(expected);
        }
      });
    }
  }

  test("reinstate after suspend returns to the remembered state", () => {
    for (const prior of ["active", "trialing", "past_due"] as LicenseStatus[]) {
      const suspended = { ...transition({ status: prior, priorStatus: null }, "suspend") } as { status: LicenseStatus; priorStatus: LicenseStatus | null };
      expect(suspended.priorStatus).toBe(prior);
      expect(transition(suspended, "reinstate").status).toBe(prior);
    }
  });
});

describe("usability", () => {
  const now = new Date("2026-11-21T00:00:00Z");
  test("status decides first", () => {
    for (const s of ALL) {
      expect(isUsable({ status: s, validUntil: null }, 0, now)).toBe(["active", "trialing", "past_due"].includes(s));
    }
  });
  test("valid_until plus grace days bounds usability", () => {
    const validUntil = new Date("2026-11-20T00:00:00Z");
    expect(isUsable({ status: "active", validUntil }, 0, now)).toBe(false);
    expect(isUsable({ status: "active", validUntil }, 1, now)).toBe(true);
    expect(isUsable({ status: "active", validUntil }, 1, new Date("2026-11-21T00:00:00.001Z"))).toBe(false);
  });
});

describe("edit guards", () => {
  test("only a revoked license is frozen", () => {
    for (const s of ALL) {
      if (s === "revoked") expect(() => assertNotRevoked({ status: s }, "change the plan of")).toThrow(AppError);
      else expect(() => assertNotRevoked({ status: s }, "change the plan of")).not.toThrow();
    }
  });
  test("a trialing license needs an expiry; others may have none", () => {
    expect(trialExpiryError({ status: "trialing", priorStatus: null }, null)).not.toBeNull();
    expect(trialExpiryError({ status: "suspended", priorStatus: "trialing" }, null)).not.toBeNull();
    expect(trialExpiryError({ status: "trialing", priorStatus: null }, new Date(0))).toBeNull();
    expect(trialExpiryError({ status: "active", priorStatus: null }, null)).toBeNull();
    expect(trialExpiryError({ status: "suspended", priorStatus: "active" }, null)).toBeNull();
  });
});

describe("billingTransition (payment-driven status changes)", () => {
  const lic = (status: LicenseStatus, priorStatus: LicenseStatus | null = null) => ({ status, priorStatus });
  test("usable states follow the subscription", () => {
    expect(billingTransition(lic("trialing"), "active")).toEqual({ status: "active", priorStatus: null });
    expect(billingTransition(lic("active"), "past_due")).toEqual({ status: "past_due", priorStatus: null });
    expect(billingTransition(lic("past_due"), "active")).toEqual({ status: "active", priorStatus: null });
    expect(billingTransition(lic("active"), "canceled")).toEqual({ status: "canceled", priorStatus: null });
    expect(billingTransition(lic("active"), "active")).toBeNull();
  });
  test("admin decisions win: revoked untouched, suspended keeps its status and only its prior state follows", () => {
    for (const to of ["active", "trialing", "past_due", "canceled"] as const) expect(billingTransition(lic("revoked"), to)).toBeNull();
    expect(billingTransition(lic("suspended", "active"), "past_due")).toEqual({ priorStatus: "past_due" });
    expect(billingTransition(lic("suspended", "past_due"), "past_due")).toBeNull();
  });
  test("canceled is final for billing; an expired license comes back only when paid (or is canceled)", () => {
    for (const to of ["active", "trialing", "past_due"] as const) expect(billingTransition(lic("canceled"), to)).toBeNull();
    expect(billingTransition(lic("expired"), "active")).toEqual({ status: "active", priorStatus: null });
    expect(billingTransition(lic("expired"), "past_due")).toBeNull();
    expect(billingTransition(lic("expired"), "trialing")).toBeNull();
    expect(billingTransition(lic("expired"), "canceled")).toEqual({ status: "canceled", priorStatus: null });
  });
  test("Stripe subscription statuses map to license statuses", () => {
    expect(["trialing", "active", "past_due", "unpaid", "canceled", "incomplete_expired", "incomplete", "paused", "weird"].map(billingStatusOf)).toEqual([
      "trialing",
      "active",
      "past_due",
      "past_due",
      "canceled",
      "canceled",
      null,
      null,
      null,
    ]);
  });
});
