// Sign-in verbs (DECISIONS: Sessions and sign-in): the email one-time code and the development
// login. Both end in sessions/service.signIn. OAuth lives in modules/oauth.
//
// A code belongs to a sign-in attempt: the browser that asked for it holds the attempt's cookie, and
// only a verify carrying that cookie can try (or spend) the code. So another client's wrong guesses
// never burn a code, and no per-address guess limit exists for others to exhaust; the one limit per
// address is the inbox-flood cap (domain.ts), far above what a person needs (docs/sign-in.md).
import { randomBytes, randomInt } from "node:crypto";
import type { Config } from "../../config";
import type { Deps, Repos } from "../../deps";
import { hmacSha256Hex } from "../../crypto/hash";
import { AppError } from "../../shared/errors";
import { MINUTE } from "../../shared/clock";
import { cookieValue } from "../../shared/cookies";
import { normalizeEmail } from "../users/domain";
import { sealedEmail } from "../email/outbox";
import { signIn } from "../sessions/service";
import {
  ATTEMPT_COOKIE,
  ATTEMPT_TOKEN_SHAPE,
  attemptCookieScope,
  clearAttemptCookie,
  CODE_DIGITS,
  CODE_FLOOD_WINDOW_MS,
  CODE_GUESSES_PER_IP,
  CODE_MAX_ATTEMPTS,
  CODE_REQUESTS_PER_IP,
  CODE_TTL_MS,
  CODES_PER_ADDRESS,
  setAttemptCookie,
  capReached,
  judgeGuess,
} from "./domain";
import type { CodeCheck, CodeFloodCap, NewSignInCode } from "./repo";
import type { Effects } from "../outbox/effects";


export function signInCodeHash(deps: Pick<Deps, "secrets">, email: string, code: string): string {
  return hmacSha256Hex(deps.secrets.subkey("signInCodeHash"), `${email}\n${code}`);
}

function attemptHash(deps: Pick<Deps, "secrets">, token: string): string {
  return hmacSha256Hex(deps.secrets.subkey("signInAttemptLookup"), token);
}

/** The attempt token of a Cookie header, or null when absent or not shaped like one. */
function attemptTokenFrom(cookieHeader: string | null): string | null {
  const token = cookieValue(cookieHeader, ATTEMPT_COOKIE);
  return token !== null && ATTEMPT_TOKEN_SHAPE.test(token) ? token : null;
}

const tooMany = (retryAfterSeconds: number, message = "Too many sign-in requests; try again later.") =>
  new AppError("RATE_LIMITED", { message, retryAfterSeconds });

async function limit(deps: Pick<Deps, "rateLimiter" | "clock">, key: string, perMinute: number): Promise<void> {
  const d = await deps.rateLimiter.hit(key, perMinute, MINUTE, deps.clock.nowMs());
  if (!d.allowed) throw tooMany(d.retryAfterSeconds);
}

/**
 * Whether an address may receive a sign-in code: a user already, the owner of a license, or an
 * ADMIN_EMAILS address. Asked by the email handler when the code email is delivered, never while
 * answering the request: the request does the same work for every address, so neither its answer
 * nor its timing tells who is known (and the service cannot be used to mail arbitrary addresses).
 */
export async function maySignIn(repos: Pick<Repos, "users" | "licenses">, config: Pick<Config, "adminEmails">, address: string): Promise<boolean> {
  const email = normalizeEmail(address);
  if (config.adminEmails.includes(email)) return true;
  const [user, owned] = await Promise.all([repos.users.findByEmail(email), repos.licenses.list({ email, limit: 1 })]);
  return user !== null || owned.items.length > 0;
}

/**
 * Stores an attempt's code in the caller's unit of work: unless `cap.max` codes were made for the
 * address since `cap.since` (then nothing is written, and the answer says when the oldest of them
 * was), ends the attempt `replaces` (the same browser's previous one; it still counts for the cap),
 * stores the code and writes its effects (the email carrying it). The address's lock makes
 * concurrent requests for one address, on any node, count one after another.
 */
export async function storeCode(
  repos: Pick<Repos, "signInCodes" | "outbox">,
  code: NewSignInCode,
  opts: { replaces: string | null; cap: CodeFloodCap },
  effects: Effects,
): Promise<"ok" | { floodedSince: Date }> {
  await repos.signInCodes.lockAddress(code.email);
  const floodedSince = capReached(await repos.signInCodes.madeSince(code.email, opts.cap.since), opts.cap.max);
  if (floodedSince) return { floodedSince };
  if (opts.replaces !== null) await repos.signInCodes.expire(opts.replaces, code.createdAt);
  await repos.signInCodes.insert(code);
  await repos.outbox.writeEffects(effects);
  return "ok";
}

/**
 * One guess at an attempt's code in the caller's unit of work, the code's row locked so that of
 * guesses at once (any node) each sees the others' count: a match spends the code ("ok"), a miss
 * counts an attempt; anything else is "invalid". Other attempts, of the same address or not, are
 * untouched.
 */
export async function guessCode(repos: Pick<Repos, "signInCodes">, attempt: string, codeHash: string, now: Date, maxAttempts: number): Promise<CodeCheck> {
  const code = await repos.signInCodes.lock(attempt);
  const verdict = judgeGuess(code, codeHash, now, maxAttempts);
  // Spent by expiring it now: the row stays, counted by the flood cap until pruned.
  if (verdict === "spend") await repos.signInCodes.expire(attempt, now);
  if (verdict === "miss") await repos.signInCodes.setAttempts(attempt, code!.attempts + 1);
  return verdict === "spend" ? "ok" : "invalid";
}

/**
 * Starts a sign-in attempt: a code for the address, bound to this browser by the attempt cookie
 * returned (a new request from the same browser ends its previous attempt). The code email is
 * written for every address; the email handler drops it at delivery unless the address may sign in
 * (maySignIn). The caller answers the same whatever the address.
 */
export async function requestSignInCode(deps: Deps, input: { email: string; ip: string; cookie: string | null }): Promise<{ setCookie: string }> {
  const email = normalizeEmail(input.email);
  await limit(deps, `sign-in-code:ip:${input.ip}`, CODE_REQUESTS_PER_IP);
  const code = String(randomInt(0, 10 ** CODE_DIGITS)).padStart(CODE_DIGITS, "0");
  const token = randomBytes(32).toString("base64url");
  const previous = attemptTokenFrom(input.cookie);
  const now = deps.clock.now();
  const mail = sealedEmail(deps.secrets, { template: "sign_in_code", to: email, at: now, data: { ttl_minutes: CODE_TTL_MS / MINUTE }, secret: { code } });
  const put = await deps.db.transaction(({ repos }) =>
    storeCode(
      repos,
      { attemptHash: attemptHash(deps, token), email, codeHash: signInCodeHash(deps, email, code), createdAt: now, expiresAt: new Date(now.getTime() + CODE_TTL_MS) },
      { replaces: previous === null ? null : attemptHash(deps, previous), cap: { max: CODES_PER_ADDRESS, since: new Date(now.getTime() - CODE_FLOOD_WINDOW_MS) } },
      { emails: [mail] },
    ),
  );
  // The cap counts codes of unknown addresses alike, so this 429 tells nothing about the address.
  // Room comes back when the oldest counted code leaves the window.
  if (put !== "ok") {
    const wait = put.floodedSince.getTime() + CODE_FLOOD_WINDOW_MS - now.getTime();
    throw tooMany(Math.max(1, Math.ceil(wait / 1000)), "Too many sign-in codes were asked for this address; try again later.");
  }
  // Committed. The write already woke the delivery worker; the nudge is folded into that wake-up and
  // is made for every address, so the request does the same work whoever asked.
  deps.outboxNudge.nudge();
  return { setCookie: setAttemptCookie(token, attemptCookieScope(deps.config.baseUrl)) };
}

/**
 * Checks a code against this browser's attempt (the attempt cookie); on success opens a session and
 * clears the attempt cookie. Every failure, no cookie included, is the same 400 SIGN_IN_CODE_INVALID.
 */
export async function verifySignInCode(
  deps: Deps,
  input: { email: string; code: string; ip: string; userAgent: string | null; cookie: string | null },
) {
  const email = normalizeEmail(input.email);
  await limit(deps, `sign-in-guess:ip:${input.ip}`, CODE_GUESSES_PER_IP);
  const token = attemptTokenFrom(input.cookie);
  // The guess and, when it spends the code, the session in one unit of work; a miss commits its
  // count and answers after.
  const out =
    token === null
      ? null
      : await deps.db.transaction(async (tx) => {
          const verdict = await guessCode(tx.repos, attemptHash(deps, token), signInCodeHash(deps, email, input.code), tx.clock.now(), CODE_MAX_ATTEMPTS);
          return verdict === "ok" ? signIn(tx, { email, method: "otp", ip: input.ip, userAgent: input.userAgent }) : null;
        });
  if (!out) throw new AppError("SIGN_IN_CODE_INVALID");
  return { ...out, clearAttemptCookie: clearAttemptCookie(attemptCookieScope(deps.config.baseUrl)) };
}

/** DEV_LOGIN=true only (the route is not mounted otherwise): signs any address in without proof. */
export async function devLogin(deps: Deps, input: { email: string; ip: string; userAgent: string | null }) {
  if (!deps.config.devLogin || deps.config.nodeEnv === "production") throw new AppError("NOT_FOUND");
  return deps.db.transaction((tx) => signIn(tx, { email: input.email, method: "dev", ip: input.ip, userAgent: input.userAgent }));
}
