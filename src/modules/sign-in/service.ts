// Sign-in verbs (DECISIONS: Sessions and sign-in): the email one-time code and the development
// login. Both end in sessions/service.signIn. OAuth lives in modules/oauth.
import { randomInt } from "node:crypto";
import type { Deps } from "../../deps";
import { hmacSha256Hex } from "../../crypto/hash";
import { AppError } from "../../shared/errors";
import { MINUTE } from "../../shared/clock";
import { normalizeEmail } from "../users/domain";
import { sealedEmail } from "../email/outbox";
import { signIn } from "../sessions/service";

export const CODE_TTL_MS = 10 * MINUTE;
export const CODE_MAX_ATTEMPTS = 5;
export const CODE_DIGITS = 6;
/**
 * Requests per minute: codes asked for one address, codes asked from one client address, guesses
 * from one client address, guesses at one address. The last bounds an attacker who rotates client
 * addresses: without it, 3 codes a minute × 5 attempts each let 15 guesses a minute at one account.
 */
export const CODE_REQUESTS_PER_ADDRESS = 3;
export const CODE_REQUESTS_PER_IP = 10;
export const CODE_GUESSES_PER_IP = 30;
// One code's CODE_MAX_ATTEMPTS plus one: a person who mistypes still gets all their attempts.
export const CODE_GUESSES_PER_ADDRESS = 6;

export function signInCodeHash(deps: Pick<Deps, "secrets">, email: string, code: string): string {
  return hmacSha256Hex(deps.secrets.subkey("signInCodeHash"), `${email}\n${code}`);
}

async function limit(deps: Pick<Deps, "rateLimiter" | "clock">, key: string, perMinute: number): Promise<void> {
  const d = await deps.rateLimiter.hit(key, perMinute, MINUTE, deps.clock.nowMs());
  if (!d.allowed) throw new AppError("RATE_LIMITED", { message: "Too many sign-in requests; try again later.", retryAfterSeconds: d.retryAfterSeconds });
}

/**
 * Whether an address may receive a code: a user already, the owner of a license, or an
 * ADMIN_EMAILS address. Others get the same answer and no email (no account enumeration, and the
 * service cannot be used to mail arbitrary addresses). Both reads always run, so the time taken
 * does not depend on which of them matches.
 */
async function canSignIn(deps: Deps, email: string): Promise<boolean> {
  const [user, owned] = await Promise.all([deps.repos.users.findByEmail(email), deps.repos.licenses.list({ email, limit: 1 })]);
  return deps.config.adminEmails.includes(email) || user !== null || owned.items.length > 0;
}

/**
 * Sends a one-time code to the address when it may sign in. The caller answers the same whatever
 * happened here, so the response never tells whether the address is known.
 */
export async function requestSignInCode(deps: Deps, input: { email: string; ip: string }): Promise<void> {
  const email = normalizeEmail(input.email);
  await limit(deps, `sign-in-code:ip:${input.ip}`, CODE_REQUESTS_PER_IP);
  await limit(deps, `sign-in-code:email:${email}`, CODE_REQUESTS_PER_ADDRESS);
  const known = await canSignIn(deps, email);
  // The same work for every address (a code is stored either way; an unknown address just never
  // receives it), so the answer's timing does not tell a known address from an unknown one.
  const code = String(randomInt(0, 10 ** CODE_DIGITS)).padStart(CODE_DIGITS, "0");
  const now = deps.clock.now();
  const expiresAt = new Date(now.getTime() + CODE_TTL_MS);
  const mail = sealedEmail(deps.secrets, { template: "sign_in_code", to: email, at: now, data: { ttl_minutes: CODE_TTL_MS / MINUTE }, secret: { code } });
  await deps.repos.signInCodes.put({ email, codeHash: signInCodeHash(deps, email, code), createdAt: now, expiresAt }, known ? { emails: [mail] } : {});
  // Committed: deliver now rather than at the next scheduled pass (a code is waited for).
  if (known) deps.outboxNudge.nudge();
}

/** Checks a code; on success opens a session. Every failure is the same 400 SIGN_IN_CODE_INVALID. */
export async function verifySignInCode(
  deps: Deps,
  input: { email: string; code: string; ip: string; userAgent: string | null },
) {
  const email = normalizeEmail(input.email);
  await limit(deps, `sign-in-guess:ip:${input.ip}`, CODE_GUESSES_PER_IP);
  await limit(deps, `sign-in-guess:email:${email}`, CODE_GUESSES_PER_ADDRESS);
  const verdict = await deps.repos.signInCodes.check(email, signInCodeHash(deps, email, input.code), deps.clock.now(), CODE_MAX_ATTEMPTS);
  if (verdict !== "ok") throw new AppError("SIGN_IN_CODE_INVALID");
  return deps.db.transaction((tx) => signIn(tx, { email, method: "otp", ip: input.ip, userAgent: input.userAgent }));
}

/** DEV_LOGIN=true only (the route is not mounted otherwise): signs any address in without proof. */
export async function devLogin(deps: Deps, input: { email: string; ip: string; userAgent: string | null }) {
  if (!deps.config.devLogin || deps.config.nodeEnv === "production") throw new AppError("NOT_FOUND");
  return deps.db.transaction((tx) => signIn(tx, { email: input.email, method: "dev", ip: input.ip, userAgent: input.userAgent }));
}
