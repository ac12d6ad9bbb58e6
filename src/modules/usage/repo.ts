import type { Recorder } from "../idempotency/repo";
import type { Effects } from "../outbox/effects";
import type { LicenseAccess } from "../license-api/repo";

export interface UsageCounter {
  licenseId: string;
  feature: string;
  periodKey: string;
  used: number;
  updatedAt: Date;
}

export interface ConsumeInput {
  licenseId: string;
  feature: string;
  periodKey: string;
  quantity: number;
  /** null = unlimited: counted, never refused. */
  limit: number | null;
  metadata: Record<string, unknown> | null;
  at: Date;
  /**
   * The feature's Stripe meter (event name), or null/absent: an accepted report of a metered feature
   * also queues one meter event (meter_queue, drained by the metered-sync pass) in the same write
   * transaction; a refused report queues nothing.
   */
  meter?: string | null;
}

/** `used` is the counter after the report when accepted, the unchanged counter when refused. */
export type ConsumeResult = { accepted: boolean; used: number };

/**
 * What one report did to its counter, for its side effects: accepted, from `before` to `used`; or
 * refused, `firstRefusal` when it is the first refusal of this (license, feature, period) counter
 * since it started (or was reset) — the counter keeps a mark, so exactly one report sees true.
 */
export type ConsumeChange = { accepted: true; before: number; used: number } | { accepted: false; used: number; firstRefusal: boolean };

export interface CounterRef {
  feature: string;
  periodKey: string;
}

export interface UsageRepo {
  /**
   * Atomic (spec: License rule 3): in one write transaction reads the counter of (license, feature,
   * period), refuses if the quantity does not fit under the limit, else increments it and stores the
   * usage event. Concurrent reports can never push the counter past the limit. `check` sees the
   * license as committed inside that transaction and throws to refuse (a revoke that won the race).
   * `record`, when given, runs inside the same transaction after an accepted write (the
   * Idempotency-Key outcome is stored there, so a crash cannot separate the two); throwing from it
   * undoes the increment and the event. `effects`, when given, sees every report's change (accepted
   * or refused) and its side effects are written in the same transaction (before `record`).
   */
  consume(
    input: ConsumeInput,
    check: (current: LicenseAccess | null) => void,
    record?: Recorder<ConsumeResult>,
    effects?: (change: ConsumeChange) => Effects,
  ): Promise<ConsumeResult>;
  /** Current value of one counter (0 when the period has no row yet). */
  used(licenseId: string, feature: string, periodKey: string): Promise<number>;
  /** Deletes the given counters (admin reset) and their quota.exceeded marks, with the side effects of `effects` (the audit row listing what was reset). */
  reset(licenseId: string, refs: CounterRef[], effects: (reset: UsageCounter[]) => Effects): Promise<UsageCounter[]>;
}
