// Pure rules of the email one-time code (docs/sign-in.md): its lifetime and limits, and the
// sign-in-attempt cookie that binds a code to the browser that asked for it.
import { HOUR, MINUTE } from "../../shared/clock";
import { cookieScope, scopedCookie, type CookieScope } from "../../shared/cookies";
import { constantTimeEqual } from "../../crypto/hash";

export const CODE_TTL_MS = 10 * MINUTE;
/** Wrong guesses one attempt allows; then its code is dead (only that attempt's). */
export const CODE_MAX_ATTEMPTS = 5;
export const CODE_DIGITS = 6;
/** Per client address, per minute: code requests and guesses. */
export const CODE_REQUESTS_PER_IP = 10;
export const CODE_GUESSES_PER_IP = 30;
/**
 * The inbox-flood cap: codes created for one address within CODE_FLOOD_WINDOW_MS, whoever asked
 * (spent and replaced ones count). The only limit another client can use against an address, so it
 * is far above what a person needs (a few codes), and it bounds guessing from rotating client
 * addresses: 20 codes × 5 guesses = 100 guesses an hour at one address, 1e-4 of the code space
 * (under 0.25 % a day).
 */
export const CODES_PER_ADDRESS = 20;
export const CODE_FLOOD_WINDOW_MS = HOUR;

/** The cookie naming the browser's sign-in attempt: a random token, stored only as a keyed hash. */
export const ATTEMPT_COOKIE = "sign_in_attempt";
/** 32 random bytes, base64url: 43 characters. */
export const ATTEMPT_TOKEN_SHAPE = /^[A-Za-z0-9_-]{43}$/;
/** Routes under the /api/v1 prefix (src/app.ts API_PREFIX) that read the attempt cookie. */
export const OTP_PATH = "/api/v1/auth/otp";

export function attemptCookieScope(baseUrl: string): CookieScope {
  return cookieScope(baseUrl, OTP_PATH);
}

// SameSite=Strict: the code is only ever entered on Keyward's own page, so the cookie never needs
// to travel with a request another site started. HttpOnly: scripts never see it. It lasts as long as
// the code it names.
export function setAttemptCookie(token: string, scope: CookieScope): string {
  return scopedCookie(ATTEMPT_COOKIE, token, CODE_TTL_MS / 1000, scope, "Strict");
}

export function clearAttemptCookie(scope: CookieScope): string {
  return scopedCookie(ATTEMPT_COOKIE, "", 0, scope, "Strict");
}

/**
 * The flood cap's verdict on the codes made for an address within the window: null while there is
 * room, else when the oldest counted code was made (room comes back when it leaves the window).
 */
export function capReached(made: { n: number; oldest: Date | null }, max: number): Date | null {
  return made.n >= max && made.oldest ? made.oldest : null;
}

/**
 * One guess against an attempt's code: "spend" (a live code with attempts left whose hash matches,
 * compared in constant time), "miss" (a live one that does not match: the attempt counts it), or
 * "invalid" (no such attempt, or its code expired, spent or out of attempts).
 */
export function judgeGuess(code: { codeHash: string; expiresAt: Date; attempts: number } | null, codeHash: string, now: Date, maxAttempts: number): "spend" | "miss" | "invalid" {
  if (!code || code.expiresAt.getTime() <= now.getTime() || code.attempts >= maxAttempts) return "invalid";
  return constantTimeEqual(code.codeHash, codeHash) ? "spend" : "miss";
}
