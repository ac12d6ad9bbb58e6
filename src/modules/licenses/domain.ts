// Pure license rules (DECISIONS: License states). No I/O, no clock: `now` is passed in.
import { AppError } from "../../shared/errors";
import { DAY } from "../../shared/clock";
import type { License, LicensePatch, LicenseStatus } from "./repo";

export const USABLE_STATUSES: readonly LicenseStatus[] = ["active", "trialing", "past_due"];

/** Usable = active, trialing or past_due, and not past valid_until + grace_days. */
export function isUsable(license: Pick<License, "status" | "validUntil">, graceDays: number, now: Date): boolean {
  if (!USABLE_STATUSES.includes(license.status)) return false;
  if (license.validUntil === null) return true;
  return now.getTime() <= license.validUntil.getTime() + graceDays * DAY;
}

export type LicenseAction = "revoke" | "suspend" | "reinstate";

/**
 * Transition table:
 *   revoke     any state but revoked            → revoked (terminal)
 *   suspend    active | trialing | past_due      → suspended (prior state remembered)
 *   reinstate  suspended                         → prior state (active if none recorded)
 *              expired | canceled                → active
 *   anything else                               → 409 INVALID_TRANSITION
 */
export function transition(license: Pick<License, "status" | "priorStatus">, action: LicenseAction): LicensePatch {
  const from = license.status;
  const refuse = () =>
    new AppError("INVALID_TRANSITION", {
      message: `Cannot ${action} a license that is ${from}.`,
      details: { from, action },
    });
  switch (action) {
    case "revoke":
      if (from === "revoked") throw refuse();
      return { status: "revoked", priorStatus: null };
    case "suspend":
      if (!USABLE_STATUSES.includes(from)) throw refuse();
      return { status: "suspended", priorStatus: from };
    case "reinstate":
      if (from === "suspended") return { status: license.priorStatus ?? "active", priorStatus: null };
      if (from === "expired" || from === "canceled") return { status: "active", priorStatus: null };
      throw refuse();
  }
}

/**
 * Keeps `pastDueSince` in step with a status change: entering past_due starts an episode (at `at`),
 * staying in it (or suspending from it, and reinstating back to it) keeps its start, and any other
 * status ends it. A patch that sets pastDueSince itself, or no status, is returned as it is.
 */
export function withPastDueEpisode(before: Pick<License, "status" | "priorStatus" | "pastDueSince">, patch: LicensePatch, at: Date): LicensePatch {
  if (patch.status === undefined || "pastDueSince" in patch) return patch;
  const prior = "priorStatus" in patch ? (patch.priorStatus ?? null) : before.priorStatus;
  const inEpisode = patch.status === "past_due" || (patch.status === "suspended" && prior === "past_due");
  return { ...patch, pastDueSince: inEpisode ? (before.pastDueSince ?? at) : null };
}

/**
 * A revoked license is frozen: revoke is terminal (DECISIONS: License states), so no admin edit —
 * plan, dates or add-ons — may change it afterwards either. Refused with 409 like a transition.
 */
export function assertNotRevoked(license: Pick<License, "status">, action: string): void {
  if (license.status === "revoked") {
    throw new AppError("INVALID_TRANSITION", {
      message: `Cannot ${action} a revoked license; revoked is terminal.`,
      details: { from: "revoked", action },
    });
  }
}

/**
 * A trialing license always has an end: without valid_until the lifecycle pass could never expire
 * the trial. Returns the field error, or null when the combination is fine.
 */
export function trialExpiryError(license: Pick<License, "status" | "priorStatus">, validUntil: Date | null): string | null {
  // A suspended trial returns to trialing on reinstate, so it counts as a trial here.
  const trial = license.status === "trialing" || (license.status === "suspended" && license.priorStatus === "trialing");
  return trial && validUntil === null ? "a trial license needs an expiry" : null;
}

/** The license statuses a Stripe subscription drives (docs/payments.md, "Subscriptions"). */
export type BillingStatus = "active" | "trialing" | "past_due" | "canceled";

/**
 * The status patch for a payment-driven change to `to` (a paid invoice, a failed one, a subscription
 * update or deletion); null when the status stays as it is. Admin decisions win: a revoked license
 * is never touched, and a suspended one stays suspended — only the status it returns to on
 * reinstate (`priorStatus`) follows the subscription. `canceled` is final for billing (Stripe never
 * revives a canceled subscription, so a late event for it must not). An `expired` license comes back
 * when the subscription is paid again. Keep pastDueSince in step with `withPastDueEpisode`.
 */
export function billingTransition(license: Pick<License, "status" | "priorStatus">, to: BillingStatus): LicensePatch | null {
  const from = license.status;
  if (from === "revoked" || from === "canceled" || from === to) return null;
  if (from === "suspended") return license.priorStatus === to ? null : { priorStatus: to };
  if (from === "expired" && to !== "active" && to !== "canceled") return null;
  return { status: to, priorStatus: null };
}

/** Stripe subscription status → the license status it drives; null for states that say nothing yet. */
export function billingStatusOf(stripeStatus: string): BillingStatus | null {
  switch (stripeStatus) {
    case "trialing":
      return "trialing";
    case "active":
      return "active";
    case "past_due":
    case "unpaid":
      return "past_due";
    case "canceled":
    case "incomplete_expired":
      return "canceled";
    default:
      // incomplete (first payment pending), paused (trial ended without a payment method): no change.
      return null;
  }
}
