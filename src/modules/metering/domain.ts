// Metered-sync rules: batch sizes, claims and the retry schedule. Pure: no I/O, no clock.
import { HOUR, MINUTE, SECOND } from "../../shared/clock";

/** Rows claimed and sent per batch. */
export const METER_BATCH_SIZE = 25;
/** Batches per run: a run sends at most 500 events; the rest go in the next run (every minute). */
export const METER_MAX_BATCHES = 20;
/**
 * How long a claim keeps a row from other drainers. Longer than a batch normally takes (each call is
 * bounded by the SDK's 20 s timeout and 2 retries); if a stalled drainer outlives it, the row is sent
 * again under the same identifier and Stripe answers resource_already_exists: still counted once.
 */
export const METER_CLAIM_MS = 10 * MINUTE;
export const METER_RETRY_BASE_MS = 30 * SECOND;
export const METER_RETRY_CAP_MS = HOUR;

/**
 * Delay before the next try after `attempts` tries: exponential from 30 s, capped at one hour, with
 * "equal jitter" (half fixed, half random) so rows that failed together do not retry together.
 * A row is retried until it is sent or skipped (docs/payments.md "Metered billing").
 */
export function retryDelayMs(attempts: number, random: () => number = Math.random): number {
  const exp = Math.min(METER_RETRY_CAP_MS, METER_RETRY_BASE_MS * 2 ** Math.max(0, Math.min(attempts - 1, 20)));
  return Math.round(exp / 2 + (exp / 2) * random());
}
