// The job passes: each a verb `(deps, ctx) => counts`, run on a schedule by the scheduler and on demand
// through POST /admin/system/jobs/{name}/run (DECISIONS: Data engines and jobs — "each pass is a verb
// an admin route can call too"). Schedules are 5-field cron expressions in UTC, so every node derives
// the same slots whatever its local time zone.
import type { Deps } from "../deps";
import { MINUTE } from "../shared/clock";
import { pruneIdempotencyKeys } from "../modules/idempotency/service";
import { REPEAT_MEMORY_MS } from "../modules/abuse/domain";
import { RATE_LIMIT_WINDOW_MS } from "../shared/rate-limiter";
import { deliverOutbox } from "../modules/outbox/service";
import { expireFloatingSessions } from "../modules/floating/service";
import { runLifecycle } from "../modules/lifecycle/service";
import { runMeteredSyncJob } from "../modules/metering/service";
import { pruneHistory } from "./prune-history";
import { drain, PRUNE_LIMITS } from "../shared/batches";
import { deliverWebhooks } from "../modules/webhooks/deliver";

/** The lifecycle pass (expiries, reminders, dunning); also POST /admin/system/run-expiry-checks (in the background, 202). */
export const LIFECYCLE = "lifecycle";

/** The metered-billing drain (Stripe meter events); also POST /admin/system/run-metered-sync. */
export const METERED_SYNC = "metered-sync";

/**
 * schedule: a cron slot; admin: POST /admin/system/jobs/{name}/run; nudge: a prompt deliver-outbox
 * run of earlier versions (the delivery worker replaced it; kept so their records still read).
 */
export type JobTrigger = "schedule" | "admin" | "nudge";

/**
 * The schedule of the passes the delivery worker runs continuously on every node (jobs/delivery-worker.ts)
 * instead of on a cron slot; the scheduler does not schedule them, an admin can still run them.
 */
export const CONTINUOUS = "continuous";

/** The outbox delivery pass (the delivery worker does its work continuously). */
export const DELIVER_OUTBOX = "deliver-outbox";
/** The webhook delivery pass (the delivery worker does its work continuously). */
export const DELIVER_WEBHOOKS = "deliver-webhooks";

export interface JobContext {
  /** When the pass started (the node's clock). */
  now: Date;
  /** The scheduled slot; for an admin or nudged run, the moment it started. */
  slot: Date;
  trigger: JobTrigger;
  /** Aborted when the node shuts down during a background run (runner.ts startPass); long passes stop between pages. */
  signal?: AbortSignal;
}

/** What a pass reports: counts, stored as the job's last result and returned by the admin route. */
export type JobResult = Record<string, number>;

export interface JobPass {
  name: string;
  /** Cron expression (UTC), or CONTINUOUS. */
  schedule: string;
  /** The lease a run takes; the pass must finish within it (nothing renews it). */
  leaseMs: number;
  description: string;
  /**
   * Runs longer than a request may stay open (minutes at a million licenses): POST
   * /admin/system/jobs/{name}/run starts it in the background and answers 202 with the run to poll.
   */
  background?: boolean;
  run(deps: Deps, ctx: JobContext): Promise<JobResult>;
}

export const JOB_PASSES: readonly JobPass[] = [
  {
    name: DELIVER_OUTBOX,
    schedule: CONTINUOUS,
    // Longer than one claim of outbox messages (CLAIM_LEASE_MS), which bounds a batch's deliveries.
    leaseMs: 15 * MINUTE,
    description:
      "Hands due outbox messages to their delivery handler (events fan out into webhook deliveries, emails go to SMTP); retries with backoff. Every node with jobs on does this continuously (within a second of a message being written or due); running it here makes one extra pass on this node.",
    run: async (deps) => ({ ...(await deliverOutbox(deps)) }),
  },
  {
    name: DELIVER_WEBHOOKS,
    schedule: CONTINUOUS,
    // Longer than one claim of deliveries (DELIVERY_CLAIM_MS); each request is bounded by its timeouts.
    leaseMs: 10 * MINUTE,
    description:
      "POSTs due webhook deliveries to their endpoints (Standard Webhooks signatures, 5 s connect / 15 s total timeout each; WEBHOOK_CONCURRENCY requests at once per node, WEBHOOK_ENDPOINT_CONCURRENCY per endpoint); retries with backoff, disables an endpoint on 410 or after 20 failures in a row. Every node with jobs on does this continuously (within a second of a delivery being written or due); running it here makes one extra pass on this node.",
    run: async (deps) => ({ ...(await deliverWebhooks(deps)) }),
  },
  {
    name: "expire-floating",
    schedule: "* * * * *",
    leaseMs: 5 * MINUTE,
    description: "Deletes floating sessions past their expiry (they never count and are never revived), recording a floating.expired event for each.",
    run: async (deps, { now }) => ({ expired: await expireFloatingSessions(deps, now) }),
  },
  {
    name: LIFECYCLE,
    schedule: "7 * * * *",
    // Pages of 100 licenses, transactions of 10 actions; far inside the hour before the next slot.
    leaseMs: 50 * MINUTE,
    background: true,
    description:
      "Expires trials past valid_until, active/past_due licenses past valid_until + grace_days and past_due licenses unpaid for more than 30 days; sends expiry and support reminders, support-lapse notices and dunning emails, each once per license and end date.",
    run: async (deps, { now, signal }) => ({ ...(await (deps.passThreads ? deps.passThreads.lifecycle(now, signal) : runLifecycle(deps, now, { signal }))) }),
  },
  {
    name: METERED_SYNC,
    schedule: "* * * * *",
    // Up to 20 batches of 25 Stripe calls; each claim of a batch lasts METER_CLAIM_MS on its own.
    leaseMs: 15 * MINUTE,
    description:
      "Sends queued usage of metered features to Stripe as meter events (stable identifiers, so none is counted twice); retries failures with backoff. Does nothing while Stripe is not configured. Also POST /admin/system/run-metered-sync.",
    run: async (deps) => await runMeteredSyncJob(deps),
  },
  {
    name: "prune-abuse",
    schedule: "*/15 * * * *",
    leaseMs: 5 * MINUTE,
    description: "Forgets brute-force state of addresses idle past the lockout memory and rate-limit counters older than two windows.",
    run: async (deps, { now }) => ({
      lockouts: (await drain(PRUNE_LIMITS, (n) => deps.repos.bruteForce.prune(new Date(now.getTime() - REPEAT_MEMORY_MS), n))).deleted,
      rate_limit_counters: (await drain(PRUNE_LIMITS, (n) => deps.rateLimiter.prune(now.getTime() - 2 * RATE_LIMIT_WINDOW_MS, n))).deleted,
    }),
  },
  {
    name: "prune-idempotency",
    schedule: "17 * * * *",
    leaseMs: 5 * MINUTE,
    description: "Deletes Idempotency-Key records older than the 24-hour replay window.",
    run: async (deps) => ({ deleted: await pruneIdempotencyKeys(deps) }),
  },
  {
    name: "prune-sessions",
    schedule: "23 * * * *",
    leaseMs: 5 * MINUTE,
    description: "Deletes sessions past their idle or absolute expiry and sign-in codes past their expiry.",
    run: async (deps, { now }) => ({
      sessions: (await drain(PRUNE_LIMITS, (n) => deps.repos.sessions.pruneExpired(now, n))).deleted,
      sign_in_codes: (await drain(PRUNE_LIMITS, (n) => deps.repos.signInCodes.pruneExpired(now, n))).deleted,
    }),
  },
  {
    name: "prune-history",
    schedule: "41 * * * *",
    // At most 50 batches of 1,000 rows per table (prune-history.ts), each one short statement.
    leaseMs: 15 * MINUTE,
    description:
      "Deletes finished outbox messages (sent, failed, logged), webhook deliveries (delivered, failed) and metered-billing rows (sent, skipped) older than HISTORY_RETENTION_DAYS, and processed Stripe event ids older than that or 30 days, whichever is longer; never a pending row. In batches of 1,000, at most 50 per table and run.",
    run: async (deps, { now }) => ({ ...(await pruneHistory(deps, now)) }),
  },
];
