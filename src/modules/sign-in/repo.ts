// Email one-time sign-in codes, one per sign-in attempt (the browser that asked, named by the keyed
// hash of its attempt cookie), the code stored as a keyed hash of (address, code).

export interface NewSignInCode {
  /** Keyed hash of the attempt cookie's token. */
  attemptHash: string;
  email: string;
  codeHash: string;
  createdAt: Date;
  expiresAt: Date;
}

export type CodeCheck = "ok" | "invalid";

export interface CodeFloodCap {
  /** At most this many codes for one address… */
  max: number;
  /** …created after this instant (spent, replaced and expired ones count). */
  since: Date;
}

/** A stored code, as a guess is judged against it (domain.ts judgeGuess). */
export interface StoredSignInCode {
  codeHash: string;
  expiresAt: Date;
  attempts: number;
}

/**
 * Rows only; the rules (the flood cap, the guess limit) are the verbs' (service.ts storeCode,
 * guessCode) with domain.ts deciding, each in one unit of work.
 */
export interface SignInCodeRepo {
  /** Takes the address's turn until the unit of work ends: codes for one address are counted and stored one at a time. */
  lockAddress(email: string): Promise<void>;
  /** How many codes were made for the address after `since`, and when the oldest of them was. */
  madeSince(email: string, since: Date): Promise<{ n: number; oldest: Date | null }>;
  insert(code: NewSignInCode): Promise<void>;
  /** The attempt's code, locked until the unit of work ends; null when there is none. */
  lock(attemptHash: string): Promise<StoredSignInCode | null>;
  /** Ends the attempt's code at `at` (spent, or replaced by the same browser's next attempt); the row stays, counted by the cap. */
  expire(attemptHash: string, at: Date): Promise<void>;
  /** Records the attempt's count of wrong guesses. */
  setAttempts(attemptHash: string, attempts: number): Promise<void>;
  /**
   * Deletes the codes no longer needed (a job pass): those created CODE_FLOOD_WINDOW_MS or more
   * before `now`, long expired and no longer counted by the cap; at most `limit` of them, by primary
   * key in one short statement (one batch of the pass). How many.
   */
  pruneExpired(now: Date, limit: number): Promise<number>;
}
