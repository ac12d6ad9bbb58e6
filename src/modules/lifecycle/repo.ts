// The lifecycle pass's storage: a keyset walk over licenses due for an action, and one transaction per
// batch that applies the actions under their guards (DECISIONS: License states — lifecycle pass).
import type { Effects } from "../outbox/effects";
import type { License, LicenseStatus } from "../licenses/repo";

/** The date column a walk follows, in (column, id) order over its index. */
export type LifecycleColumn = "validUntil" | "supportUntil" | "pastDueSince";

export interface LifecycleScan {
  column: LifecycleColumn;
  statuses: readonly LicenseStatus[];
  /** Exclusive lower bound of the column; null = no bound. */
  from: Date | null;
  /** Inclusive upper bound of the column. */
  to: Date;
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
  /** Up to `limit` licenses matching `scan`, after `cursor`, in (column, id) order. */
  scan(scan: LifecycleScan, cursor: LifecycleCursor | null, limit: number): Promise<LifecycleCandidate[]>;
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
}

export const noticeKey = (licenseId: string, kind: string, dueFor: Date) => `${licenseId}|${kind}|${dueFor.getTime()}`;
