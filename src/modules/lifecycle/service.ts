// The lifecycle pass (DECISIONS: License states): expires trials, grace periods and long past_due
// episodes, and sends reminders, support notices and dunning emails. Run hourly by the job runner
// (src/jobs/passes.ts, one node per slot through the job lease) and on demand by
// POST /admin/system/run-expiry-checks (in the background under the same lease: jobs/service.ts).
//
// Keyset walks over the date columns (valid_until, past_due_since, support_until), one status at a
// time over (status, date, id) indexes, in pages of `batchSize` licenses with a yield to the event
// loop between pages; each page's actions are applied in transactions of at most repo.applyBatch
// (10 on SQLite), so neither a million licenses nor one page holds the SQLite write lock for long.
// Every action is guarded in its transaction: an expiry is a compare-and-set of the license, a notice
// an insert into lifecycle_notices that does nothing on conflict, and only the run whose write took
// effect writes the event and the email. Two runs in a row, or two nodes at once, send nothing twice.
//
// Which dates are walked (domain.ts passRanges): the full windows without a watermark; after a
// completed pass under the same reminder settings, expiry in full (it holds only licenses due or in
// grace) and, for reminders and notices, only the dates that crossed a threshold since that pass,
// plus catch-up walks over the licenses and billing links changed since then.
import type { Repos } from "../../deps";
import { SYSTEM_ACTOR } from "../../shared/actor";
import { DAY } from "../../shared/clock";
import type { Secrets } from "../keys/secrets";
import { sealedEmail } from "../email/outbox";
import type { LifecycleTemplate } from "../email/editable";
import { licenseExpired, licenseSupportEnded } from "../licenses/events";
import type { License, LicenseStatus } from "../licenses/repo";
import type { Effects } from "../outbox/effects";
import { isoOrNull } from "../outbox/events";
import { resolveSettings, type Settings } from "../settings/domain";
import { yieldToEventLoop } from "../../shared/slices";
import {
  daysLeft,
  dueDunningDay,
  dueReminder,
  emptyCounts,
  expiryReason,
  expiryJudgedAt,
  fullWindows,
  LIFECYCLE_BATCH_SIZE,
  noticeKind,
  pastDueExpiresAt,
  renewsAutomatically,
  SUPPORT_LAPSE_NOTICE_DAYS,
  passRanges,
  USABLE_STATUSES,
  WATERMARK_OVERLAP_MS,
  watermarkBasis,
  type ExpiryReason,
  type LifecycleCounts,
  type Range,
} from "./domain";
import { noticeKey, type LifecycleCandidate, type LifecycleColumn, type LifecycleCursor, type LifecycleOp, type LifecycleScan } from "./repo";

export interface LifecycleDeps {
  repos: Pick<Repos, "lifecycle" | "settings">;
  secrets: Secrets;
}

export interface LifecycleOptions {
  /** Licenses per page and transaction (tests use a small one). */
  batchSize?: number;
  /** Stops the pass between pages (the node shutting down); it then throws and saves no watermark. */
  signal?: AbortSignal;
}

const EXPIRED_COUNT: Record<ExpiryReason, keyof LifecycleCounts> = {
  trial_ended: "trials_expired",
  grace_ended: "grace_expired",
  past_due_limit: "past_due_expired",
};

/** The non-secret values every lifecycle email carries (no license key: its hint only). */
function baseData(c: LifecycleCandidate) {
  return { license_id: c.license.id, product_name: c.productName, plan_name: c.planName, key_hint: c.license.keyHint };
}

/** One pass at `now`: returns counts per action. */
export async function runLifecycle(deps: LifecycleDeps, now: Date, opts: LifecycleOptions = {}): Promise<LifecycleCounts> {
  const batchSize = Math.max(1, opts.batchSize ?? LIFECYCLE_BATCH_SIZE);
  const settings = resolveSettings(await deps.repos.settings.all());
  const counts = emptyCounts();
  const email = (template: LifecycleTemplate, c: LifecycleCandidate, data: Record<string, unknown>) =>
    sealedEmail(deps.secrets, { template, to: c.license.email, at: now, data: { ...baseData(c), ...data } });

  const expire = (c: LifecycleCandidate, reason: ExpiryReason): LifecycleOp => {
    const before = c.license;
    return {
      type: "expire",
      licenseId: before.id,
      expect: { status: before.status, validUntil: before.validUntil, pastDueSince: before.pastDueSince },
      effects: (after: License): Effects => ({
        audit: {
          actor: SYSTEM_ACTOR,
          action: "license.expire",
          entityType: "license",
          entityId: after.id,
          productId: after.productId,
          changes: { status: { from: before.status, to: after.status }, reason },
          at: now,
        },
        events: [licenseExpired(before, after, reason, now)],
        emails: [email("license_expired", c, { expired_at: now.toISOString(), valid_until: isoOrNull(before.validUntil), reason })],
      }),
    };
  };
  const notice = (c: LifecycleCandidate, kind: string, column: LifecycleColumn, dueFor: Date, statuses: readonly LicenseStatus[], effects: Effects): LifecycleOp => ({
    type: "notice",
    licenseId: c.license.id,
    kind,
    dueFor,
    statuses,
    guardColumn: column,
    effects,
  });

  const t = now.getTime();
  const full = fullWindows(t, settings);
  const within = (at: Date | null, w: Range) => at !== null && (w.from === null || at.getTime() > w.from) && (w.to === null || at.getTime() <= w.to);

  // valid_until: expire trials and ended grace periods; expiry reminders.
  const planValid = (c: LifecycleCandidate): Planned[] => {
    const reason = expiryReason(c.license, c.graceDays, expiryJudgedAt(now, c.subscriptionStatus));
    if (reason) return [{ op: expire(c, reason), count: EXPIRED_COUNT[reason] }];
    const end = c.license.validUntil!;
    const d = remindersOn(settings) && !renewsAutomatically(c.subscriptionStatus) ? dueReminder(end, settings.expiry_reminder_days, now) : null;
    if (d === null) return [];
    const data = { valid_until: end.toISOString(), days_left: daysLeft(end, now), status: c.license.status };
    return [{ op: notice(c, noticeKind.expiryReminder(d), "validUntil", end, USABLE_STATUSES, { emails: [email("expiry_reminder", c, data)] }), count: "expiry_reminders" }];
  };
  // past_due_since: the 30-day limit; dunning on day 1/7/14.
  const planPastDue = (c: LifecycleCandidate): Planned[] => {
    const reason = expiryReason(c.license, c.graceDays, expiryJudgedAt(now, c.subscriptionStatus));
    if (reason) return [{ op: expire(c, reason), count: EXPIRED_COUNT[reason] }];
    const since = c.license.pastDueSince!;
    const day = dueDunningDay(since, now);
    if (day === null) return [];
    const data = { past_due_since: since.toISOString(), dunning_day: day, expires_at: isoOrNull(pastDueExpiresAt(c.license, c.graceDays)) };
    return [{ op: notice(c, noticeKind.dunning(day), "pastDueSince", since, ["past_due"], { emails: [email("dunning", c, data)] }), count: "dunning_emails" }];
  };
  // support_until: reminders before it, a notice (event + email) once it has passed.
  const planSupport = (c: LifecycleCandidate): Planned[] => {
    // An earlier walk may have expired it in this run: walks read committed rows, so it is not a
    // candidate (and in one batch with its expiry, apply's status guard refuses the notice).
    const end = c.license.supportUntil!;
    if (end.getTime() <= t) {
      const effects: Effects = {
        events: [licenseSupportEnded(c.license, now)],
        emails: [email("support_ended", c, { support_until: end.toISOString() })],
      };
      return [{ op: notice(c, noticeKind.supportEnded, "supportUntil", end, USABLE_STATUSES, effects), count: "support_ended" }];
    }
    const d = remindersOn(settings) ? dueReminder(end, settings.support_reminder_days, now) : null;
    if (d === null) return [];
    const data = { support_until: end.toISOString(), days_left: daysLeft(end, now) };
    return [{ op: notice(c, noticeKind.supportReminder(d), "supportUntil", end, USABLE_STATUSES, { emails: [email("support_reminder", c, data)] }), count: "support_reminders" }];
  };
  // A license changed since the last pass: everything the full windows would find for it.
  const planChanged = (c: LifecycleCandidate): Planned[] => {
    const l = c.license;
    if (!USABLE_STATUSES.includes(l.status)) return [];
    return [
      ...(within(l.validUntil, full.validUntil) ? planValid(c) : []),
      ...(l.status === "past_due" && within(l.pastDueSince, full.pastDueSince) ? planPastDue(c) : []),
      ...(within(l.supportUntil, full.supportUntil) ? planSupport(c) : []),
    ];
  };

  // The watermark: a pass under the same reminder settings, recent enough that its windows are
  // narrower than the full ones, lets this pass read only what became due since (passRanges).
  const basis = watermarkBasis(settings);
  const last = await deps.repos.lifecycle.watermark();
  const widest = Math.max(SUPPORT_LAPSE_NOTICE_DAYS, ...settings.expiry_reminder_days, ...settings.support_reminder_days) * DAY;
  const since =
    last && last.basis === basis && last.passedAt.getTime() > t - widest ? Math.min(last.passedAt.getTime(), t) - WATERMARK_OVERLAP_MS : null;
  const ranges = passRanges(t, settings, since);
  const at = (ms: number | null) => (ms === null ? null : new Date(ms));
  const go = (scan: LifecycleScan, plan: (c: LifecycleCandidate) => Planned[]) => walk(deps, scan, batchSize, counts, now, plan, opts.signal);

  // One walk per (status, range): each page an index range scan over (status, date, id), no sort.
  // The walks run one after another; the order across statuses and walks does not matter for
  // correctness, because every action is guarded in apply (an expiry is a compare-and-set of the
  // license as read, a notice an insert that does nothing on conflict and checks the date and status
  // it is about), so a license seen by two walks, or changed between them, is acted on at most once.
  for (const status of USABLE_STATUSES) for (const r of ranges.validUntil) await go({ column: "validUntil", status, from: at(r.from), to: at(r.to) }, planValid);
  for (const r of ranges.pastDueSince) await go({ column: "pastDueSince", status: "past_due", from: at(r.from), to: at(r.to) }, planPastDue);
  for (const status of USABLE_STATUSES) for (const r of ranges.supportUntil) await go({ column: "supportUntil", status, from: at(r.from), to: at(r.to) }, planSupport);
  if (since !== null) {
    // Catch-up: licenses edited (a new valid_until or support_until, a status back to usable) or
    // whose subscription status changed (no longer renewing by itself: reminders due) since then.
    for (const status of USABLE_STATUSES) await go({ column: "updatedAt", status, from: at(since), to: null }, planChanged);
    await go({ column: "billingUpdatedAt", status: null, from: at(since), to: null }, planChanged);
  }

  await deps.repos.lifecycle.saveWatermark({ passedAt: now, basis });
  await deps.repos.lifecycle.optimize();
  return counts;
}

const remindersOn = (s: Settings) => s.reminders_enabled;

type Planned = { op: LifecycleOp; count: keyof LifecycleCounts };


/** Walks one scan page by page; each page's ops are applied in transactions of the repository's applyBatch at most. */
async function walk(
  deps: LifecycleDeps,
  scan: LifecycleScan,
  batchSize: number,
  counts: LifecycleCounts,
  now: Date,
  plan: (c: LifecycleCandidate) => Planned[],
  signal: AbortSignal | undefined,
): Promise<void> {
  let cursor: LifecycleCursor | null = null;
  for (;;) {
    signal?.throwIfAborted();
    const { items: page, next } = await deps.repos.lifecycle.scan(scan, cursor, batchSize);
    counts.scanned += page.length;
    let planned = page.flatMap(plan);
    const noticeIds = planned.flatMap((p) => (p.op.type === "notice" ? [p.op.licenseId] : []));
    if (noticeIds.length > 0) {
      const sent = await deps.repos.lifecycle.recorded(noticeIds);
      planned = planned.filter((p) => p.op.type !== "notice" || !sent.has(noticeKey(p.op.licenseId, p.op.kind, p.op.dueFor)));
    }
    const size = Math.max(1, Math.min(batchSize, deps.repos.lifecycle.applyBatch));
    for (let i = 0; i < planned.length; i += size) {
      const chunk = planned.slice(i, i + size);
      const done = await deps.repos.lifecycle.apply(
        chunk.map((p) => p.op),
        now,
      );
      counts.batches += 1;
      done.forEach((ok, j) => {
        if (ok) counts[chunk[j]!.count] += 1;
      });
      await yieldToEventLoop();
    }
    if (next === null) return;
    cursor = next;
    await yieldToEventLoop();
  }
}
