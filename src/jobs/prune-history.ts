// The prune-history pass: bounded growth of the delivery and bookkeeping tables. Finished outbox
// messages, webhook deliveries and metered-billing rows are kept HISTORY_RETENTION_DAYS after they
// finished; processed Stripe event ids at least STRIPE_EVENT_MIN_RETENTION_DAYS after processing.
// Rows still pending are never deleted.
//
// Bounded work: each repository call deletes one batch of at most PRUNE_BATCH rows by primary key in
// one short statement (on SQLite one short write transaction, so another writer waits a batch at
// most, never the whole backlog), and a run stops after PRUNE_MAX_BATCHES batches per table; a larger
// backlog (the first run on an old database) is worked off over the next hourly runs.
import type { Deps } from "../deps";
import { DAY } from "../shared/clock";
import { drain, PRUNE_LIMITS, type PruneLimits } from "../shared/batches";

export { PRUNE_BATCH, PRUNE_MAX_BATCHES, type PruneLimits } from "../shared/batches";

/**
 * Processed Stripe event ids make webhook processing exactly-once, so they must outlive every
 * redelivery: Stripe retries an event automatically for up to 3 days, and keeps events for 30 days,
 * during which one can still be resent by hand from the Dashboard.
 */
export const STRIPE_EVENT_MIN_RETENTION_DAYS = 30;

export type PruneHistoryResult = {
  outbox: number;
  webhook_deliveries: number;
  stripe_events: number;
  meter_queue: number;
  /** Tables whose run stopped at PRUNE_MAX_BATCHES with possibly more to delete (the next run goes on). */
  capped: number;
};

/** The cut-offs for a run at `now`: rows that finished before them go. */
export function historyCutoffs(retentionDays: number, now: Date): { history: Date; stripeEvents: Date } {
  const ago = (days: number) => new Date(now.getTime() - days * DAY);
  return { history: ago(retentionDays), stripeEvents: ago(Math.max(retentionDays, STRIPE_EVENT_MIN_RETENTION_DAYS)) };
}

/** The pass (`limits`: smaller bounds for tests). Tables one after another, each in bounded batches. */
export async function pruneHistory(deps: Deps, now: Date, limits: PruneLimits = PRUNE_LIMITS): Promise<PruneHistoryResult> {
  const { repos } = deps;
  const cut = historyCutoffs(deps.config.historyRetentionDays, now);
  const runs = {
    outbox: await drain(limits, (n) => repos.outbox.pruneFinished(cut.history, n)),
    webhook_deliveries: await drain(limits, (n) => repos.webhooks.pruneFinishedDeliveries(cut.history, n)),
    stripe_events: await drain(limits, (n) => repos.payments.pruneEvents(cut.stripeEvents, n)),
    meter_queue: await drain(limits, (n) => repos.meterQueue.pruneFinished(cut.history, n)),
  };
  return {
    outbox: runs.outbox.deleted,
    webhook_deliveries: runs.webhook_deliveries.deleted,
    stripe_events: runs.stripe_events.deleted,
    meter_queue: runs.meter_queue.deleted,
    capped: Object.values(runs).filter((r) => r.capped).length,
  };
}
