// The lifecycle pass's rules (DECISIONS: License states — lifecycle pass). Pure: `now` is passed in.
//   trialing past valid_until                     → expired (reason trial_ended)
//   active / past_due past valid_until + grace    → expired (reason grace_ended)
//   past_due for longer than 30 days              → expired (reason past_due_limit)
//   reminders N days before valid_until (settings expiry_reminder_days, default 7/3/1) and before
//   support_until (support_reminder_days, 30/7); a notice when support lapses; dunning on day 1/7/14
//   of a past_due episode. Each notice is recorded per (license, kind, end date).
import { DAY } from "../../shared/clock";
import { USABLE_STATUSES } from "../licenses/domain";
import type { License } from "../licenses/repo";

export const PAST_DUE_LIMIT_DAYS = 30;
/** Day 1 is the day the episode began (its first 24 hours), day 7 six days later, and so on. */
export const DUNNING_DAYS: readonly number[] = [1, 7, 14];
/**
 * A support-lapse notice goes out only within this many days after support_until, so a license
 * imported (or a feature switched on) long after its support ended gets no stale notice.
 */
export const SUPPORT_LAPSE_NOTICE_DAYS = 30;
/** Licenses per transaction (and per scan page). */
export const LIFECYCLE_BATCH_SIZE = 500;

export { USABLE_STATUSES };

export type ExpiryReason = "trial_ended" | "grace_ended" | "past_due_limit";

/** Why the license must expire at `now`, or null when it stays. */
export function expiryReason(license: Pick<License, "status" | "validUntil" | "pastDueSince">, graceDays: number, now: Date): ExpiryReason | null {
  const t = now.getTime();
  const { status, validUntil, pastDueSince } = license;
  if (status === "trialing") return validUntil !== null && t > validUntil.getTime() ? "trial_ended" : null;
  if (status !== "active" && status !== "past_due") return null;
  if (validUntil !== null && t > validUntil.getTime() + graceDays * DAY) return "grace_ended";
  if (status === "past_due" && pastDueSince !== null && t > pastDueSince.getTime() + PAST_DUE_LIMIT_DAYS * DAY) return "past_due_limit";
  return null;
}

/**
 * The reminder due before `end`: the shortest lead `d` (days) with now ≥ end − d, while now < end.
 * Only the most urgent one: a license issued 2 days before its end gets the 3-day reminder, not the
 * 7-day one as well. Null when none is due.
 */
export function dueReminder(end: Date, leadDays: readonly number[], now: Date): number | null {
  const left = end.getTime() - now.getTime();
  if (left <= 0) return null;
  const due = leadDays.filter((d) => left <= d * DAY);
  return due.length === 0 ? null : Math.min(...due);
}

/** The dunning day due in an episode that began at `since`: the latest of 1/7/14 reached, or null. */
export function dueDunningDay(since: Date, now: Date): number | null {
  const elapsed = now.getTime() - since.getTime();
  if (elapsed < 0 || elapsed > PAST_DUE_LIMIT_DAYS * DAY) return null;
  const reached = DUNNING_DAYS.filter((d) => elapsed >= (d - 1) * DAY);
  return reached.length === 0 ? null : Math.max(...reached);
}

/** Whole days from now to `end`, rounded up (at least 1 while end is ahead). */
export function daysLeft(end: Date, now: Date): number {
  return Math.max(1, Math.ceil((end.getTime() - now.getTime()) / DAY));
}

/** When a past_due license will expire unless paid: the earlier of the grace end and the 30-day limit. */
export function pastDueExpiresAt(license: Pick<License, "validUntil" | "pastDueSince">, graceDays: number): Date | null {
  const ends: number[] = [];
  if (license.validUntil) ends.push(license.validUntil.getTime() + graceDays * DAY);
  if (license.pastDueSince) ends.push(license.pastDueSince.getTime() + PAST_DUE_LIMIT_DAYS * DAY);
  return ends.length ? new Date(Math.min(...ends)) : null;
}

export const noticeKind = {
  expiryReminder: (days: number) => `expiry_reminder:${days}`,
  supportReminder: (days: number) => `support_reminder:${days}`,
  supportEnded: "support_ended",
  dunning: (day: number) => `dunning:${day}`,
} as const;

/** Counts a run reports (POST /admin/system/run-expiry-checks, the job's last result). */
export interface LifecycleCounts {
  scanned: number;
  trials_expired: number;
  grace_expired: number;
  past_due_expired: number;
  expiry_reminders: number;
  support_reminders: number;
  support_ended: number;
  dunning_emails: number;
  batches: number;
}

export const emptyCounts = (): LifecycleCounts => ({
  scanned: 0,
  trials_expired: 0,
  grace_expired: 0,
  past_due_expired: 0,
  expiry_reminders: 0,
  support_reminders: 0,
  support_ended: 0,
  dunning_emails: 0,
  batches: 0,
});

/**
 * A license billed through a live Stripe subscription (its link's last status active or trialing)
 * renews by itself at valid_until: the pass sends it no expiry reminders (docs/payments.md,
 * "Subscriptions"). Expiry itself still applies if the renewal never arrives.
 */
export function renewsAutomatically(subscriptionStatus: string | null): boolean {
  return subscriptionStatus === "active" || subscriptionStatus === "trialing";
}

/**
 * How long past its end (valid_until, plus grace) a license on a live Stripe subscription waits for
 * Stripe's word before the pass expires it. At a period or trial end Stripe invoices and charges
 * within hours, and its webhook then extends the license (invoice.paid) or starts past_due
 * (invoice.payment_failed, with dunning); expiring it in between would send a customer who pays on
 * time an expiry notice. If neither ever arrives (webhooks broken, subscription gone unnoticed), the
 * license still expires, this much later.
 */
export const RENEWAL_SETTLEMENT_MS = 2 * DAY;

/** The instant expiryReason is judged at: `now`, or `now` minus the settlement window for a live subscription. */
export function expiryJudgedAt(now: Date, subscriptionStatus: string | null): Date {
  return renewsAutomatically(subscriptionStatus) ? new Date(now.getTime() - RENEWAL_SETTLEMENT_MS) : now;
}
