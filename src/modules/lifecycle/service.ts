// The lifecycle pass (DECISIONS: License states): expires trials, grace periods and long past_due
// episodes, and sends reminders, support notices and dunning emails. Run hourly by the job runner
// (src/jobs/passes.ts, one node per slot through the job lease) and on demand by
// POST /admin/system/run-expiry-checks.
//
// Three keyset walks over indexed date columns (valid_until, past_due_since, support_until), each in
// pages of `batchSize` licenses; each page's actions are applied in ONE transaction (repo.apply), so
// a million licenses never hold one transaction. Every action is guarded in that transaction: an
// expiry is a compare-and-set of the license, a notice an insert into lifecycle_notices that does
// nothing on conflict, and only the run whose write took effect writes the event and the email. Two
// runs in a row, or two nodes at once, send nothing twice.
import type { Repos } from "../../deps";
import { assertSystemWide, SYSTEM_ACTOR, type Actor } from "../../shared/actor";
import { DAY } from "../../shared/clock";
import type { Secrets } from "../keys/secrets";
import { sealedEmail } from "../email/outbox";
import type { LifecycleTemplate } from "../email/lifecycle";
import { licenseExpired, licenseSupportEnded } from "../licenses/events";
import type { License } from "../licenses/repo";
import type { Effects } from "../outbox/effects";
import { isoOrNull } from "../outbox/events";
import { resolveSettings, type Settings } from "../settings/domain";
import {
  daysLeft,
  dueDunningDay,
  dueReminder,
  emptyCounts,
  expiryReason,
  expiryJudgedAt,
  LIFECYCLE_BATCH_SIZE,
  noticeKind,
  pastDueExpiresAt,
  renewsAutomatically,
  SUPPORT_LAPSE_NOTICE_DAYS,
  USABLE_STATUSES,
  type ExpiryReason,
  type LifecycleCounts,
} from "./domain";
import { noticeKey, type LifecycleCandidate, type LifecycleCursor, type LifecycleOp, type LifecycleScan } from "./repo";

export interface LifecycleDeps {
  repos: Pick<Repos, "lifecycle" | "settings">;
  secrets: Secrets;
}

export interface LifecycleOptions {
  /** Licenses per page and transaction (tests use a small one). */
  batchSize?: number;
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
  const notice = (c: LifecycleCandidate, kind: string, column: LifecycleScan["column"], dueFor: Date, statuses: LifecycleScan["statuses"], effects: Effects): LifecycleOp => ({
    type: "notice",
    licenseId: c.license.id,
    kind,
    dueFor,
    statuses,
    guardColumn: column,
    effects,
  });

  // 1. valid_until: expire trials and ended grace periods; expiry reminders.
  const maxExpiryLead = Math.max(0, ...settings.expiry_reminder_days);
  await walk(deps, { column: "validUntil", statuses: USABLE_STATUSES, from: null, to: new Date(now.getTime() + maxExpiryLead * DAY) }, batchSize, counts, now, (c) => {
    const reason = expiryReason(c.license, c.graceDays, expiryJudgedAt(now, c.subscriptionStatus));
    if (reason) return [{ op: expire(c, reason), count: EXPIRED_COUNT[reason] }];
    const end = c.license.validUntil!;
    const d = remindersOn(settings) && !renewsAutomatically(c.subscriptionStatus) ? dueReminder(end, settings.expiry_reminder_days, now) : null;
    if (d === null) return [];
    const data = { valid_until: end.toISOString(), days_left: daysLeft(end, now), status: c.license.status };
    return [{ op: notice(c, noticeKind.expiryReminder(d), "validUntil", end, USABLE_STATUSES, { emails: [email("expiry_reminder", c, data)] }), count: "expiry_reminders" }];
  });

  // 2. past_due_since: the 30-day limit; dunning on day 1/7/14.
  await walk(deps, { column: "pastDueSince", statuses: ["past_due"], from: null, to: now }, batchSize, counts, now, (c) => {
    const reason = expiryReason(c.license, c.graceDays, expiryJudgedAt(now, c.subscriptionStatus));
    if (reason) return [{ op: expire(c, reason), count: EXPIRED_COUNT[reason] }];
    const since = c.license.pastDueSince!;
    const day = dueDunningDay(since, now);
    if (day === null) return [];
    const data = { past_due_since: since.toISOString(), dunning_day: day, expires_at: isoOrNull(pastDueExpiresAt(c.license, c.graceDays)) };
    return [{ op: notice(c, noticeKind.dunning(day), "pastDueSince", since, ["past_due"], { emails: [email("dunning", c, data)] }), count: "dunning_emails" }];
  });

  // 3. support_until: reminders before it, a notice (event + email) once it has passed.
  const maxSupportLead = Math.max(0, ...settings.support_reminder_days);
  const supportScan: LifecycleScan = {
    column: "supportUntil",
    statuses: USABLE_STATUSES,
    from: new Date(now.getTime() - SUPPORT_LAPSE_NOTICE_DAYS * DAY),
    to: new Date(now.getTime() + maxSupportLead * DAY),
  };
  await walk(deps, supportScan, batchSize, counts, now, (c) => {
    // Step 1 may have expired it in this run: the walk reads committed rows, so it is not a candidate.
    const end = c.license.supportUntil!;
    if (end.getTime() <= now.getTime()) {
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
  });

  return counts;
}

const remindersOn = (s: Settings) => s.reminders_enabled;

type Planned = { op: LifecycleOp; count: keyof LifecycleCounts };

/** Walks one scan page by page; each page's ops are applied in one transaction. */
async function walk(
  deps: LifecycleDeps,
  scan: LifecycleScan,
  batchSize: number,
  counts: LifecycleCounts,
  now: Date,
  plan: (c: LifecycleCandidate) => Planned[],
): Promise<void> {
  let cursor: LifecycleCursor | null = null;
  for (;;) {
    const page = await deps.repos.lifecycle.scan(scan, cursor, batchSize);
    counts.scanned += page.length;
    let planned = page.flatMap(plan);
    const noticeIds = planned.flatMap((p) => (p.op.type === "notice" ? [p.op.licenseId] : []));
    if (noticeIds.length > 0) {
      const sent = await deps.repos.lifecycle.recorded(noticeIds);
      planned = planned.filter((p) => p.op.type !== "notice" || !sent.has(noticeKey(p.op.licenseId, p.op.kind, p.op.dueFor)));
    }
    if (planned.length > 0) {
      const done = await deps.repos.lifecycle.apply(
        planned.map((p) => p.op),
        now,
      );
      counts.batches += 1;
      done.forEach((ok, i) => {
        if (ok) counts[planned[i]!.count] += 1;
      });
    }
    if (page.length < batchSize) return;
    const last = page[page.length - 1]!.license;
    cursor = { at: last[scan.column]!, id: last.id };
  }
}

/** POST /admin/system/run-expiry-checks: the pass now, on this node, outside the job lease. */
export async function runExpiryChecks(deps: LifecycleDeps & { clock: { now(): Date } }, actor: Actor): Promise<LifecycleCounts> {
  assertSystemWide(actor);
  return runLifecycle(deps, deps.clock.now());
}
