// The lifecycle pass's rules (DECISIONS: License states — lifecycle pass). Pure: `now` is passed in.
//   trialing past valid_until                     → expired (reason trial_ended)
//   active / past_due past valid_until + grace    → expired (reason grace_ended)
//   past_due for longer than 30 days              → expired (reason past_due_limit)
//   reminders N days before valid_until (settings expiry_reminder_days, default 7/3/1) and before
//   support_until (support_reminder_days, 30/7); a notice when support lapses; dunning on day 1/7/14
//   of a past_due episode. Each notice is recorded per (license, kind, end date).
import { DAY, MINUTE } from "../../shared/clock";
import { USABLE_STATUSES } from "../licenses/domain";
import type { License } from "../licenses/repo";
import type { Settings } from "../settings/domain";

export const PAST_DUE_LIMIT_DAYS = 30;
/** Day 1 is the day the episode began (its first 24 hours), day 7 six days later, and so on. */
export const DUNNING_DAYS: readonly number[] = [1, 7, 14];
/**
 * A support-lapse notice goes out only within this many days after support_until, so a license
 * imported (or a feature switched on) long after its support ended gets no stale notice.
 */
export const SUPPORT_LAPSE_NOTICE_DAYS = 30;
/**
 * Licenses per scan page. Each page is one index range read (a few ms on SQLite, whose statements
 * hold this process's event loop while they run); the pass yields to the event loop between pages.
 */
export const LIFECYCLE_BATCH_SIZE = 100;
/**
 * Actions per apply transaction: on SQLite the write lock (and this process's event loop) is held
 * for the whole transaction, so it stays a few ms long however many actions a page has. Measured
 * (100k licenses, 25k actions, a shared 2-core machine): 50 expiries held the loop up to 69 ms, 10
 * up to 28 ms (an outlier: a WAL checkpoint or a collection), for about the same pass time.
 */
export const LIFECYCLE_APPLY_SIZE = 10;

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

// ---- Which dates a pass reads (the windows and the watermark) ----

/** A range of instants (ms): from exclusive, to inclusive; null = unbounded. */
export interface Range {
  from: number | null;
  to: number | null;
}

/**
 * How far before the last pass's `now` a pass with a watermark still looks: licenses changed and
 * dates crossed in the last minutes of the previous pass are read again. It covers a write whose
 * updated_at was taken before that pass read its range but that committed after it, and clocks of
 * nodes off by up to this much (docs/operations.md warns from one second on).
 */
export const WATERMARK_OVERLAP_MS = 10 * MINUTE;

/** The reminder settings a watermark holds: a pass under other settings reads its full windows. */
export function watermarkBasis(s: Pick<Settings, "reminders_enabled" | "expiry_reminder_days" | "support_reminder_days">): string {
  const days = (d: readonly number[]) => [...d].sort((a, b) => a - b);
  return JSON.stringify({ v: 1, reminders: s.reminders_enabled, expiry: days(s.expiry_reminder_days), support: days(s.support_reminder_days) });
}

/** The full windows, as every pass read them before the watermark (and a pass without one still does). */
export function fullWindows(now: number, s: Settings): { validUntil: Range; pastDueSince: Range; supportUntil: Range } {
  const lead = (d: readonly number[]) => (s.reminders_enabled ? Math.max(0, ...d) : 0) * DAY;
  return {
    // Expiry: every usable license past its end (expired ones leave the status range, so this reads
    // only those due and those still inside their grace or settlement period); reminders ahead.
    validUntil: { from: null, to: now + lead(s.expiry_reminder_days) },
    pastDueSince: { from: null, to: now },
    supportUntil: { from: now - SUPPORT_LAPSE_NOTICE_DAYS * DAY, to: now + lead(s.support_reminder_days) },
  };
}

/**
 * The ranges a pass at `now` walks per date column. `since` is the previous completed pass's `now`
 * minus WATERMARK_OVERLAP_MS, or null (no usable watermark): then each column's full window.
 *
 * With a watermark, a reminder for lead d is due for an end in (since + d, now + d]: ends further
 * out had not reached d days when the previous pass ran and the ones before were handled by it; the
 * support-lapse notice for an end in (since, now]; dunning day d for an episode that began in
 * (since − (d − 1) days, now − (d − 1) days]. Expiry keeps its full ranges: valid_until up to now, and
 * past_due_since up to now − 30 days; they hold only licenses due or still inside their grace or
 * settlement (expired ones leave the walked statuses), so a license whose grace ended while no pass
 * ran is still found. (A past_due license's grace is judged by the valid_until walk.) Licenses whose dates or billing changed since
 * then are read by the catch-up walks (service.ts), which judge them over the full windows.
 */
export function passRanges(now: number, s: Settings, since: number | null): { validUntil: Range[]; pastDueSince: Range[]; supportUntil: Range[] } {
  const full = fullWindows(now, s);
  if (since === null) return { validUntil: [full.validUntil], pastDueSince: [full.pastDueSince], supportUntil: [full.supportUntil] };
  const ahead = (days: readonly number[]): Range[] => (s.reminders_enabled ? days.map((d) => ({ from: Math.max(since + d * DAY, now), to: now + d * DAY })) : []);
  const clip = (w: Range) => (r: Range) => intersect(r, w);
  return {
    validUntil: mergeRanges([{ from: null, to: now }, ...ahead(s.expiry_reminder_days)].map(clip(full.validUntil))),
    // The 30-day limit: every episode that began more than PAST_DUE_LIMIT_DAYS ago (expired ones
    // leave the status, so this holds only those due or waiting out a renewal's settlement); dunning
    // day d: the episodes whose day d began since (past_due_since + (d - 1) days in (since, now]).
    pastDueSince: mergeRanges(
      [{ from: null, to: now - PAST_DUE_LIMIT_DAYS * DAY }, ...DUNNING_DAYS.map((d) => ({ from: since - (d - 1) * DAY, to: now - (d - 1) * DAY }))].map(
        clip(full.pastDueSince),
      ),
    ),
    supportUntil: mergeRanges([{ from: since, to: now }, ...ahead(s.support_reminder_days)].map(clip(full.supportUntil))),
  };
}

const lo = (x: number | null) => x ?? -Infinity;
const hi = (x: number | null) => x ?? Infinity;

/** The part of `r` inside `w`, or null when empty. */
export function intersect(r: Range, w: Range): Range | null {
  const from = lo(r.from) >= lo(w.from) ? r.from : w.from;
  const to = hi(r.to) <= hi(w.to) ? r.to : w.to;
  return lo(from) < hi(to) ? { from, to } : null;
}

/** Sorted, overlapping or touching ranges joined; empty ones (null) dropped. */
export function mergeRanges(ranges: readonly (Range | null)[]): Range[] {
  const sorted = ranges.filter((r): r is Range => r !== null).sort((a, b) => lo(a.from) - lo(b.from));
  const out: Range[] = [];
  for (const r of sorted) {
    const last = out[out.length - 1];
    if (last && lo(r.from) <= hi(last.to)) last.to = hi(r.to) > hi(last.to) ? r.to : last.to;
    else out.push({ ...r });
  }
  return out;
}
