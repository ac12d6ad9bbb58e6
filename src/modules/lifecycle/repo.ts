// The lifecycle pass's storage: keyset walks over licenses due for an action, one transaction per
// small batch that applies the actions under their guards (DECISIONS: License states — lifecycle
// pass), and the watermark of the last completed pass.
import type { Effects } from "../outbox/effects";
import type { License, LicenseStatus } from "../licenses/repo";

/** A license date a notice is about (and guarded by). */
export type LifecycleColumn = "validUntil" | "supportUntil" | "pastDueSince";

/**
 * The column a walk follows, in (column, id) order over an index with no sort:
 * - a LifecycleColumn with one status: (status, column, id), e.g. licenses_status_valid_until_idx;
 * - updatedAt with one status: licenses changed in the range (licenses_status_updated_idx);
 * - billingUpdatedAt: licenses whose billing link changed in the range (billing_links_updated_idx).
 */
export type WalkColumn = LifecycleColumn | "updatedAt" | "billingUpdatedAt";

export interface LifecycleScan {
  column: WalkColumn;
  /**
   * The one status walked (a date column's walk): one index range per status, so the page needs no
   * sort; also for the updatedAt walk. Null for the billingUpdatedAt walk, which reads any status.
   */
  status: LicenseStatus | null;
  /** Exclusive lower bound of the column; null = no bound. */
  from: Date | null;
  /** Inclusive upper bound of the column; null = no bound. */
  to: Date | null;
}

export interface LifecycleCursor {
  at: Date;
  id: string;
}

/** A license due for something, with what its emails show. */
export interface LifecycleCandidate {
  license: License;
  graceDays: number;
  productName: string;
  planName: string;
  /**
   * The Stripe subscription status last seen for the license (its billing link; null without one).
   * A live subscription (active, trialing) renews by itself: no expiry reminders.
   */
  subscriptionStatus: string | null;
  /** Where the walk is at this row: the next page starts after it. */
  position: LifecycleCursor;
}

/** One page of a walk. */
export interface LifecyclePage {
  items: LifecycleCandidate[];
  /** Where the next page starts; null when this page ended the walk. */
  next: LifecycleCursor | null;
}

/** The last completed pass: its `now` and the reminder settings it ran with (service.ts). */
export interface LifecycleWatermark {
  passedAt: Date;
  basis: string;
}

/** What the license must still look like when the action is applied (compare-and-set). */
export interface LicenseExpectation {
  status: LicenseStatus;
  validUntil: Date | null;
  pastDueSince: Date | null;
}

export type LifecycleOp =
  | {
      type: "expire";
      licenseId: string;
      expect: LicenseExpectation;
      /** The effects of the change, from the license as it left the write (status expired). */
      effects: (expired: License) => Effects;
    }
  | {
      type: "notice";
      licenseId: string;
      /** e.g. expiry_reminder:7, support_reminder:30, support_ended, dunning:1 */
      kind: string;
      /** The end date the notice is about; (licenseId, kind, dueFor) is unique. */
      dueFor: Date;
      /** Sent only while the license is in one of these states and `guardColumn` still equals dueFor. */
      statuses: readonly LicenseStatus[];
      guardColumn: LifecycleColumn;
      effects: Effects;
    };

export interface LifecycleRepo {
  /**
   * Most actions per apply transaction on this engine: SQLite holds its write lock, and bun:sqlite
   * this process's event loop, for the whole transaction (keep it a few ms); PostgreSQL holds only
   * the rows' locks and pays a commit (a WAL flush) per transaction (keep them few).
   */
  readonly applyBatch: number;
  /**
   * Up to `limit` licenses matching `scan`, after `cursor`, in (column, id) order: one index range
   * scan (the statement is lifecycleScanQuery in each engine's file; a contract test EXPLAINs it).
   */
  scan(scan: LifecycleScan, cursor: LifecycleCursor | null, limit: number): Promise<LifecyclePage>;
  /**
   * Applies `ops` in ONE transaction, in order; returns for each whether it took effect. An expire
   * is a conditional update (status, valid_until and past_due_since as expected, else nothing); a
   * notice is an insert into lifecycle_notices that does nothing on conflict. Only an op that took
   * effect writes its effects, so concurrent runs (other nodes) never send anything twice.
   */
  apply(ops: readonly LifecycleOp[], at: Date): Promise<boolean[]>;
  /**
   * Which of these licenses' notices are already recorded, as noticeKey(licenseId, kind, dueFor). A
   * read outside any transaction: the pass skips what was sent before, so an hourly run over
   * reminders sent earlier opens no transaction (apply's insert stays the guard for the rest).
   */
  recorded(licenseIds: readonly string[]): Promise<Set<string>>;
  /** The notices recorded for a license (tests, support). */
  notices(licenseId: string): Promise<{ kind: string; dueFor: Date; createdAt: Date }[]>;
  /** The last completed pass, or null when none completed. */
  watermark(): Promise<LifecycleWatermark | null>;
  /**
   * Records a completed pass. A pass that finishes after a later-started one (two nodes, or an admin
   * run beside the scheduled one) does not move the watermark back.
   */
  saveWatermark(w: LifecycleWatermark): Promise<void>;
  /**
   * Lets the engine refresh its planner statistics after a pass (SQLite: PRAGMA optimize, which
   * analyzes only tables whose size changed a lot; PostgreSQL: nothing, autovacuum analyzes).
   */
  optimize(): Promise<void>;
}

export const noticeKey = (licenseId: string, kind: string, dueFor: Date) => `${licenseId}|${kind}|${dueFor.getTime()}`;
