// Brute-force lockout policy for activate (spec: Limits; DECISIONS: Abuse limits). Pure: state + now.
import { DAY, HOUR } from "../../shared/clock";
import type { BruteForceState } from "./repo";

export interface BruteForcePolicy {
  /** Failed lookups inside the window that trigger a lockout (BF_MAX_FAILS). */
  maxFails: number;
  /** BF_WINDOW_SECONDS in ms. */
  windowMs: number;
  /** First lockout (BF_LOCKOUT_SECONDS) in ms; each repeat doubles it. */
  baseLockoutMs: number;
}

/** DECISIONS: "doubling per repeat, capped at 1 hour". */
export const MAX_LOCKOUT_MS = HOUR;
/**
 * How long an address is remembered after its last lockout ended: a lockout within this time of the
 * previous one counts as a repeat (doubles); after it, the address starts over at the base length.
 */
export const REPEAT_MEMORY_MS = DAY;

/** Milliseconds the address is still locked out; 0 when it is not. */
export function lockoutRemainingMs(state: BruteForceState | null, now: Date): number {
  if (!state?.lockedUntil) return 0;
  return Math.max(0, state.lockedUntil.getTime() - now.getTime());
}

export function lockoutDurationMs(policy: BruteForcePolicy, level: number): number {
  // 2^level overflows nothing: the cap is reached long before (level ≤ ~12 for a 1 s base).
  return Math.min(policy.baseLockoutMs * 2 ** Math.min(level, 30), MAX_LOCKOUT_MS);
}

/** The state after one more failed lookup at `now`. */
export function afterFailure(ip: string, current: BruteForceState | null, now: Date, policy: BruteForcePolicy): BruteForceState {
  const t = now.getTime();
  let { fails, windowStartedAt, level, lockedUntil } = current ?? { fails: 0, windowStartedAt: now, level: 0, lockedUntil: null };
  if (lockedUntil && t - lockedUntil.getTime() >= REPEAT_MEMORY_MS) {
    level = 0;
    lockedUntil = null;
  }
  if (t - windowStartedAt.getTime() >= policy.windowMs) {
    fails = 0;
    windowStartedAt = now;
  }
  fails += 1;
  if (fails >= policy.maxFails) {
    lockedUntil = new Date(t + lockoutDurationMs(policy, level));
    level += 1;
    fails = 0;
    windowStartedAt = now;
  }
  return { ip, fails, windowStartedAt, level, lockedUntil, updatedAt: now };
}
