import type { Recorder } from "../idempotency/repo";
import type { AuditEntry } from "../audit/repo";
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
}

/** `used` is the counter after the report when accepted, the unchanged counter when refused. */
export type ConsumeResult = { accepted: boolean; used: number };

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
   * undoes the increment and the event.
   */
  consume(input: ConsumeInput, check: (current: LicenseAccess | null) => void, record?: Recorder<ConsumeResult>): Promise<ConsumeResult>;
  /** Current value of one counter (0 when the period has no row yet). */
  used(licenseId: string, feature: string, periodKey: string): Promise<number>;
  /** Deletes the given counters (admin reset) with an audit row listing what was reset. */
  reset(licenseId: string, refs: CounterRef[], audit: (reset: UsageCounter[]) => AuditEntry): Promise<UsageCounter[]>;
}
