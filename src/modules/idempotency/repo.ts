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
   * was abandoned by a crashed process and is taken over.
   */
  claim(s: IdempotencyScope, bodyHash: string, at: Date, expiredBefore: Date, staleBefore: Date): ClaimResult;
  /** Stores the outcome of a claimed request. */
  complete(s: IdempotencyScope, status: number, responseSealed: string, at: Date): void;
  /** Frees a claim whose request failed with a 5xx or a transient refusal, so a retry runs again. */
  release(s: IdempotencyScope): void;
  /** Deletes rows created before `before`; returns how many. */
  prune(before: Date): number;
}
