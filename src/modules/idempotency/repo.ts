/** The scope of one Idempotency-Key (DECISIONS: Idempotency): key, route and license key hash. */
export interface IdempotencyScope {
  key: string;
  route: string;
  /** HMAC lookup hash of the license key from the body. */
  scope: string;
}

/**
 * The outcome an effect stores on its Idempotency-Key claim. The repository method that writes the
 * effect stores it in the same transaction (DECISIONS: Idempotency), on either engine.
 */
export interface ClaimCompletion {
  scope: IdempotencyScope;
  claimedAt: Date;
  status: number;
  responseSealed: string;
  at: Date;
}

/**
 * Given to an effect's repository method: presents the effect's outcome as the completion to store.
 * The method throws ClaimLostError (rolling the effect back) when the claim is no longer in flight.
 */
export type Recorder<T> = (outcome: T) => ClaimCompletion;

/** The claim was taken over (stale) or already completed: the effect's transaction rolls back. */
export class ClaimLostError extends Error {
  constructor() {
    super("The Idempotency-Key claim is no longer in flight.");
    this.name = "ClaimLostError";
  }
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
  claim(s: IdempotencyScope, bodyHash: string, at: Date, expiredBefore: Date, staleBefore: Date): Promise<ClaimResult>;
  /**
   * Stores the outcome of a claim that had no effect (a refusal, or a run that wrote nothing); false
   * when that claim is no longer in flight (taken over, or already completed). Outcomes of effects
   * are stored by the effect's own repository method through a Recorder instead.
   */
  complete(c: ClaimCompletion): Promise<boolean>;
  /** Frees the claim made at `claimedAt` if still in flight (5xx, transient refusal, collapsed 404). */
  release(s: IdempotencyScope, claimedAt: Date): Promise<void>;
  /**
   * Deletes up to `limit` rows created before `before`, by primary key in one short statement (one
   * batch of the prune-idempotency pass); returns how many.
   */
  prune(before: Date, limit: number): Promise<number>;
}
