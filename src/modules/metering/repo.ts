// The metered-billing queue (docs/payments.md "Metered billing"): one row per accepted usage report of
// a plan quota feature with a `stripe_meter`. The usage repositories insert the rows themselves, in
// the usage write's transaction; the metered-sync pass (service.ts) drains them to Stripe.

export type MeterEventStatus = "pending" | "sent" | "skipped";

export interface MeterEvent {
  /** Also the Stripe meter event's `identifier`: Stripe accepts an identifier once. */
  id: string;
  licenseId: string;
  feature: string;
  /** The Stripe meter's event name (the plan feature's stripe_meter when the usage was reported). */
  eventName: string;
  quantity: number;
  occurredAt: Date;
  /** pending: to send (again); sent: Stripe has it; skipped: will not be sent (lastError says why). */
  status: MeterEventStatus;
  /** Claims so far (each claim is one try to send it). */
  attempts: number;
  /** When a pending row is due; while a drainer holds its claim, when that claim lapses. */
  nextAttemptAt: Date;
  lastError: string | null;
  sentAt: Date | null;
}

export interface MeterQueueRepo {
  /** Inserts a pending row (the usage repositories write theirs directly in their transaction). */
  enqueue(event: MeterEvent): Promise<void>;
  /**
   * Claims up to `limit` pending rows due at `now` (next_attempt_at ≤ now), oldest occurrence first,
   * in the caller's unit of work: each gets attempts + 1 and next_attempt_at = `claimUntil`, so no other
   * drainer (another node, a concurrent admin run) takes it before `claimUntil`. On PostgreSQL rows
   * another transaction is claiming are skipped (FOR UPDATE SKIP LOCKED), never taken twice.
   * Returns the claimed rows as updated; their `attempts` is the claim's fence for the writes below.
   */
  claimDue(now: Date, claimUntil: Date, limit: number): Promise<MeterEvent[]>;
  /** pending → sent at `at`, only under the caller's claim (status pending, attempts = `attempts`); false otherwise. */
  markSent(id: string, attempts: number, at: Date): Promise<boolean>;
  /** pending → skipped with `reason` in last_error, under the caller's claim; false otherwise. */
  markSkipped(id: string, attempts: number, reason: string): Promise<boolean>;
  /** Stays pending, due again at `nextAttemptAt`, with `error` in last_error, under the caller's claim; false otherwise. */
  retryLater(id: string, attempts: number, nextAttemptAt: Date, error: string): Promise<boolean>;
  /** A license's rows, oldest occurrence first (then id). */
  listByLicense(licenseId: string): Promise<MeterEvent[]>;
  /**
   * One batch of the prune-history pass: deletes up to `limit` finished rows (sent or skipped) whose
   * next_attempt_at is before `before`, by primary key, in one short statement; returns how many went.
   * For a finished row next_attempt_at is the end of its last claim (about when it was sent or
   * skipped). Pending rows are never deleted.
   */
  pruneFinished(before: Date, limit: number): Promise<number>;
}

/** Statuses a row never leaves (the ones prune-history may delete). */
export const FINISHED_METER_STATUSES = ["sent", "skipped"] as const satisfies readonly MeterEventStatus[];
