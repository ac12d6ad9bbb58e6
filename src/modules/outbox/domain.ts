// Retry schedule of outbox deliveries (DECISIONS: Webhooks and email — "exponential backoff and
// jitter (base WEBHOOK_RETRY_BASE_SECONDS, default 30)"). Pure: state, now and a random source.
import { DAY, HOUR, SECOND } from "../../shared/clock";

/** No wait between two attempts grows past this. */
export const RETRY_CAP_MS = 6 * HOUR;
/** A message still failing this long after it was written is given up (status failed). */
export const GIVE_UP_AFTER_MS = 3 * DAY;
/**
 * The shortest wait: with full jitter a draw can be ~0, and a message failed during a pass must not be
 * due again within that same pass (it claims what is due at its start).
 */
export const MIN_RETRY_MS = SECOND;

/**
 * Full jitter ("Exponential Backoff And Jitter", AWS Architecture Blog): a uniform draw between 0 and
 * base × 2^(failures − 1), capped; spreads the retries of many messages that failed together.
 */
export function retryDelayMs(failures: number, baseMs: number, random: () => number): number {
  const ceiling = Math.min(RETRY_CAP_MS, baseMs * 2 ** Math.min(Math.max(failures - 1, 0), 30));
  return Math.max(MIN_RETRY_MS, Math.floor(random() * ceiling));
}

/** When to try again after a failure at `now`, or null to give up. `failures` includes this one. */
export function nextAttemptAfterFailure(createdAt: Date, failures: number, now: Date, baseMs: number, random: () => number): Date | null {
  if (now.getTime() - createdAt.getTime() >= GIVE_UP_AFTER_MS) return null;
  return new Date(now.getTime() + retryDelayMs(failures, baseMs, random));
}
