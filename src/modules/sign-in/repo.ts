// Email one-time sign-in codes, one per sign-in attempt (the browser that asked, named by the keyed
// hash of its attempt cookie), the code stored as a keyed hash of (address, code).
import type { Effects } from "../outbox/effects";

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

export interface SignInCodeRepo {
  /**
   * One atomic change: unless `cap.max` codes were created for the address since `cap.since`
   * (then nothing is written, and the answer says when the oldest of them was created), ends the attempt `replaces` (the same browser's previous one;
   * it still counts for the cap), stores the new attempt's code, and writes its effects (the email
   * carrying the code).
   */
  put(code: NewSignInCode, opts: { replaces: string | null; cap: CodeFloodCap }, effects: Effects): Promise<"ok" | { floodedSince: Date }>;
  /**
   * One atomic check of one attempt's code: a live code with attempts left whose hash matches is
   * spent ("ok"); a mismatch counts an attempt; no such attempt, an expired, spent or exhausted one
   * is "invalid". Other attempts, of the same address or not, are untouched.
   */
  check(attemptHash: string, codeHash: string, now: Date, maxAttempts: number): Promise<CodeCheck>;
  /**
   * Deletes the codes no longer needed (a job pass): those created CODE_FLOOD_WINDOW_MS or more
   * before `now`, long expired and no longer counted by the cap; at most `limit` of them, by primary
   * key in one short statement (one batch of the pass). How many.
   */
  pruneExpired(now: Date, limit: number): Promise<number>;
}
