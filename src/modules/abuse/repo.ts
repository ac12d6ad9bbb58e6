/** Brute-force counters of one client address (DECISIONS: Abuse limits). */
export interface BruteForceState {
  ip: string;
  fails: number;
  windowStartedAt: Date;
  /** Lockouts already served; the next one lasts base × 2^level, capped. */
  level: number;
  lockedUntil: Date | null;
  updatedAt: Date;
}

/** Idle rows a recorded failure deletes on the way (bounded work on the request path; the pass does the rest). */
export const RECORD_PRUNE_BATCH = 100;

export interface BruteForceRepo {
  /** One prepared read by primary key; activate calls it before every key lookup. */
  get(ip: string): Promise<BruteForceState | null>;
  /**
   * Atomic read-decide-write of one address's state; also prunes rows idle since `pruneBefore`.
   * Returns the new state.
   */
  recordFailure(ip: string, decide: (current: BruteForceState | null) => BruteForceState, pruneBefore: Date): Promise<BruteForceState>;
  /**
   * Deletes up to `limit` rows idle since `before` and not locked past it, in one short statement (one
   * batch of the prune-abuse pass); returns how many.
   */
  prune(before: Date, limit: number): Promise<number>;
}
