// Email one-time sign-in codes: one live code per address, stored as a keyed hash of (address, code).
import type { Effects } from "../outbox/effects";

export interface NewSignInCode {
  email: string;
  codeHash: string;
  createdAt: Date;
  expiresAt: Date;
}

export type CodeCheck = "ok" | "invalid";

export interface SignInCodeRepo {
  /**
   * Stores a fresh code for the address, replacing an earlier one (its attempts start again at 0),
   * with its effects (the email carrying the code) in the same transaction.
   */
  put(code: NewSignInCode, effects: Effects): Promise<void>;
  /**
   * One atomic check: a live code with attempts left whose hash matches is consumed ("ok"); a
   * mismatch counts an attempt; no code, an expired one or one out of attempts is "invalid".
   */
  check(email: string, codeHash: string, now: Date, maxAttempts: number): Promise<CodeCheck>;
  /** Deletes codes past their expiry (a job pass); how many. */
  pruneExpired(now: Date): Promise<number>;
}
