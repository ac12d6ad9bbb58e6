/** The scope of one Idempotency-Key (DECISIONS: Idempotency): key, route and license key hash. */
export interface IdempotencyScope {
  key: string;
  route: string;
  /** HMAC lookup hash of the license key from the body. */
  scope: string;
}

export type ClaimResult =
  | { kind: "claimed" }
  | { kind: "conflict" }
  | { kind: "in_flight" }
  | { kind: "replay"; status: number; responseSealed: string };

export interface IdempotencyRepo {
  /**
   * Atomic claim: inserts an in-flight row unless one exists for the scope (primary key). Rows created
   * before `expiredBefore` are deleted first (24 h window); an in-flight row older than `staleBefore`
   * was abandoned by a crashed process and is taken over. A claim is identified by `at` (its
   * created_at): a takeover re-stamps the row with a later instant, so the original claimer's
   * `complete` and `release` no longer match it.
   */
  claim(s: IdempotencyScope, bodyHash: string, at: Date, expiredBefore: Date, staleBefore: Date): ClaimResult;
  /**
   * Stores the outcome of the claim made at `claimedAt`; false when that claim is no longer in flight
   * (taken over, or already completed). Called INSIDE the effect's transaction (one write statement,
   * no transaction of its own), so the outcome commits or rolls back together with the effect.
   */
  complete(s: IdempotencyScope, claimedAt: Date, status: number, responseSealed: string, at: Date): boolean;
  /** Frees the claim made at `claimedAt` if still in flight (5xx, transient refusal, collapsed 404). */
  release(s: IdempotencyScope, claimedAt: Date): void;
  /** Deletes rows created before `before`; returns how many. */
  prune(before: Date): number;
}
