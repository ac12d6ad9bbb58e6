// The metered-sync pass (docs/payments.md "Metered billing"; spec: POST /admin/system/run-metered-sync):
// drains meter_queue to Stripe meter events. Run every minute by the job runner (src/jobs/passes.ts,
// one node per slot through the job lease) and on demand by the admin route.
//
// Each row is sent at most once, whoever drains: rows are claimed in batches before any Stripe call
// (MeterQueueRepo.claimDue: a claim keeps them from every other drainer, on any node, until it lapses),
// and the row id is the meter event's `identifier`, which Stripe accepts once — a resend after a lost
// answer or a lapsed claim gets resource_already_exists and is recorded as sent. So the admin route
// needs no job lease: it may run beside the scheduled pass. No Stripe call runs inside a transaction.
import type Stripe from "stripe";
import type { Deps } from "../../deps";
import { assertSystemWide, type Actor } from "../../shared/actor";
import { AppError } from "../../shared/errors";
import { stripeFailure } from "../payments/stripe-errors";
import { METER_BATCH_SIZE, METER_CLAIM_MS, METER_MAX_BATCHES, retryDelayMs } from "./domain";
import type { MeterEvent } from "./repo";

export interface MeterSyncResult {
  /** Rows claimed in this run. */
  claimed: number;
  /** Rows Stripe now has (accepted now, or found already accepted under their identifier). */
  sent: number;
  /** Rows that will not be sent: no Stripe customer for the license, or Stripe refused the event. */
  skipped: number;
  /** Rows left pending for a later run (Stripe failed or was not reached), with backoff. */
  retrying: number;
  /** The rows sent, in the order sent. */
  items: MeterEvent[];
}

export interface MeterSyncOptions {
  batchSize?: number;
  maxBatches?: number;
  random?: () => number;
}

const NO_CUSTOMER = "no Stripe customer is linked to the license (it was not bought through Stripe checkout): not sent";

/** One drain at `now` with the given client; used by the job (Stripe configured) and the admin route. */
export async function drainMeterQueue(deps: Pick<Deps, "repos" | "clock" | "logger" | "db">, stripe: Stripe, opts: MeterSyncOptions = {}): Promise<MeterSyncResult> {
  const batchSize = Math.max(1, opts.batchSize ?? METER_BATCH_SIZE);
  const maxBatches = Math.max(1, opts.maxBatches ?? METER_MAX_BATCHES);
  const result: MeterSyncResult = { claimed: 0, sent: 0, skipped: 0, retrying: 0, items: [] };
  const customers = new Map<string, string | null>();
  const customerOf = async (licenseId: string) => {
    if (!customers.has(licenseId)) customers.set(licenseId, (await deps.repos.payments.findLink(licenseId))?.stripeCustomerId ?? null);
    return customers.get(licenseId)!;
  };
  const later = (row: MeterEvent) => new Date(deps.clock.nowMs() + retryDelayMs(row.attempts, opts.random));

  for (let batch = 0; batch < maxBatches; batch++) {
    const now = deps.clock.now();
    const rows = await deps.db.transaction(({ repos }) => repos.meterQueue.claimDue(now, new Date(now.getTime() + METER_CLAIM_MS), batchSize));
    result.claimed += rows.length;
    // After a failure that says Stripe is unavailable, the rest of the batch waits (no call is made).
    let unavailable: string | null = null;
    for (const row of rows) {
      if (unavailable !== null) {
        await deps.repos.meterQueue.retryLater(row.id, row.attempts, later(row), `not tried: ${unavailable}`);
        result.retrying++;
        continue;
      }
      const customer = await customerOf(row.licenseId);
      if (!customer) {
        await deps.repos.meterQueue.markSkipped(row.id, row.attempts, NO_CUSTOMER);
        result.skipped++;
        continue;
      }
      try {
        await stripe.billing.meterEvents.create({
          event_name: row.eventName,
          payload: { stripe_customer_id: customer, value: String(row.quantity) },
          identifier: row.id,
          timestamp: Math.floor(row.occurredAt.getTime() / 1000),
        });
      } catch (e) {
        const failure = stripeFailure(e);
        if (failure.code !== "resource_already_exists") {
          if (failure.definite && (failure.status === 400 || failure.status === 404)) {
            // The event itself is refused (e.g. a timestamp older than Stripe accepts): resending
            // the same event cannot succeed.
            await deps.repos.meterQueue.markSkipped(row.id, row.attempts, `Stripe refused the event: ${failure.message}`);
            result.skipped++;
          } else {
            // No answer, a 5xx after the SDK's own retries, a rate limit or an authentication
            // problem: nothing was recorded or it may have been; either way resend later, same identifier.
            await deps.repos.meterQueue.retryLater(row.id, row.attempts, later(row), failure.message);
            result.retrying++;
            unavailable = failure.message;
            deps.logger.warn("metered sync: Stripe did not take a meter event; retrying later", { id: row.id, attempts: row.attempts, error: failure.message });
          }
          continue;
        }
        // resource_already_exists: Stripe has this identifier already (an earlier send whose answer was lost).
      }
      if (await deps.repos.meterQueue.markSent(row.id, row.attempts, deps.clock.now())) {
        result.sent++;
        result.items.push({ ...row, status: "sent" });
      }
    }
    if (rows.length < batchSize) break;
  }
  return result;
}

/** The scheduled pass: nothing to do without Stripe (the rows wait until it is configured). */
export async function runMeteredSyncJob(deps: Deps): Promise<Record<string, number>> {
  if (!deps.stripe) return {};
  const { claimed, sent, skipped, retrying } = await drainMeterQueue(deps, await deps.stripe.sdk());
  return { claimed, sent, skipped, retrying };
}

/** POST /admin/system/run-metered-sync: 503 without Stripe. */
export async function runMeteredSync(deps: Deps, actor: Actor): Promise<MeterSyncResult> {
  assertSystemWide(actor);
  if (!deps.stripe) throw new AppError("PAYMENTS_NOT_CONFIGURED", { message: "Metered sync needs Stripe: STRIPE_SECRET_KEY is not set." });
  return await drainMeterQueue(deps, await deps.stripe.sdk());
}
