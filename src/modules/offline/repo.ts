// Offline tokens (spec: Offline token issue). Issuing writes no activation (rule 5): the only rows an
// admin-issued token leaves are its audit row and its `offline_token.issued` event.
import type { Effects } from "../outbox/effects";
import type { LicenseAccess } from "../license-api/repo";

/** What `decide` returns: the caller's result and the side effects to write with it. */
export interface OfflineDecision<T> {
  result: T;
  effects: Effects;
}

export interface OfflineTokenRepo {
  /**
   * Atomic: inside one write transaction, re-reads the license and its plan (on PostgreSQL locking
   * the license row, so a suspend or revoke racing the issue either waits for it or is seen by it)
   * and passes them to `decide`, which throws to refuse (a license suspended a moment ago) or returns
   * the result and its side effects (audit row, event); those are written in the same transaction.
   */
  issue<T>(licenseId: string, decide: (current: LicenseAccess | null) => OfflineDecision<T>): Promise<T>;
}
