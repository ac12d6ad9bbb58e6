// Sessions (DECISIONS: Sessions and sign-in): a random opaque token in the `session` cookie, stored
// only as a keyed hash; 7 days idle expiry slid forward while used, 30 days absolute.
import { randomBytes } from "node:crypto";
import type { Deps } from "../../deps";
import type { Tx } from "../../db/store";
import { hmacSha256Hex } from "../../crypto/hash";
import { DAY, MINUTE } from "../../shared/clock";
import { newId } from "../../shared/ids";
import { cookieValue } from "../../shared/cookies";
import type { Effects } from "../outbox/effects";
import { normalizeEmail } from "../users/domain";
import type { User } from "../users/repo";
import type { Session } from "./repo";

export const SESSION_COOKIE = "session";
export const SESSION_IDLE_MS = 7 * DAY;
export const SESSION_ABSOLUTE_MS = 30 * DAY;
/** A session's last use is written at most this often (reads stay read-only in between). */
export const SESSION_TOUCH_INTERVAL_MS = 5 * MINUTE;

export type SignInMethod = "otp" | "dev" | "invite" | `oauth:${string}`;

export interface SignedIn {
  user: User;
  sessionId: string;
  session: Session;
}

/** 32 random bytes, base64url: 43 characters. */
const TOKEN_SHAPE = /^[A-Za-z0-9_-]{43}$/;
const USER_AGENT_MAX = 256;

export function sessionTokenHash(deps: Pick<Deps, "secrets">, token: string): string {
  return hmacSha256Hex(deps.secrets.subkey("sessionTokenLookup"), token);
}

/** The Set-Cookie value carrying `token` (HttpOnly, SameSite=Lax, Path=/, Secure on https). */
export function sessionCookie(deps: Pick<Deps, "config">, token: string, maxAgeSeconds: number): string {
  const secure = deps.config.baseUrl.startsWith("https://") ? "; Secure" : "";
  return `${SESSION_COOKIE}=${token}; Path=/; HttpOnly; SameSite=Lax; Max-Age=${maxAgeSeconds}${secure}`;
}

/** The Set-Cookie value that deletes the session cookie. */
export function clearedSessionCookie(deps: Pick<Deps, "config">): string {
  return sessionCookie(deps, "", 0);
}

/** The `session` cookie's value from a Cookie header, or null. */
export function sessionTokenFrom(cookieHeader: string | null): string | null {
  const value = cookieValue(cookieHeader, SESSION_COOKIE);
  return value !== null && TOKEN_SHAPE.test(value) ? value : null;
}

/**
 * Creates the user when missing and opens a session, inside a transaction (deps.db.transaction), so
 * the user, the session and the sign-in time are written together, or as part of a larger change
 * (invite acceptance). Returns the user and the Set-Cookie value.
 */
export async function signIn(
  tx: Tx,
  input: { email: string; method: SignInMethod; ip: string | null; userAgent: string | null },
): Promise<{ user: User; session: Session; setCookie: string }> {
  const { repos } = tx;
  const now = tx.clock.now();
  const user = await repos.users.ensure(normalizeEmail(input.email), now);
  const token = randomBytes(32).toString("base64url");
  const absolute = new Date(now.getTime() + SESSION_ABSOLUTE_MS);
  const session = await repos.sessions.create({
    id: newId(),
    tokenHash: sessionTokenHash(tx, token),
    userId: user.id,
    method: input.method,
    ip: input.ip,
    userAgent: input.userAgent === null ? null : input.userAgent.slice(0, USER_AGENT_MAX),
    createdAt: now,
    lastSeenAt: now,
    idleExpiresAt: new Date(Math.min(now.getTime() + SESSION_IDLE_MS, absolute.getTime())),
    absoluteExpiresAt: absolute,
  });
  await repos.users.touchSignIn(user.id, now);
  return { user: { ...user, lastSignInAt: now }, session, setCookie: sessionCookie(tx, token, Math.floor(SESSION_ABSOLUTE_MS / 1000)) };
}

export function sessionAlive(session: Pick<Session, "idleExpiresAt" | "absoluteExpiresAt">, now: Date): boolean {
  const t = now.getTime();
  return session.idleExpiresAt.getTime() > t && session.absoluteExpiresAt.getTime() > t;
}

/**
 * The signed-in user behind a session token, or null (unknown, expired or revoked token, or a user
 * removed since). The user row is read on every call, so a changed role applies at once. A session
 * in use slides its idle expiry forward (written at most every SESSION_TOUCH_INTERVAL_MS).
 */
export async function resolveSession(deps: Pick<Deps, "clock" | "secrets" | "repos">, token: string): Promise<SignedIn | null> {
  const session = await deps.repos.sessions.findByTokenHash(sessionTokenHash(deps, token));
  if (!session) return null;
  const now = deps.clock.now();
  if (!sessionAlive(session, now)) return null;
  const user = await deps.repos.users.get(session.userId);
  if (!user) return null;
  if (now.getTime() - session.lastSeenAt.getTime() >= SESSION_TOUCH_INTERVAL_MS) {
    const idle = new Date(Math.min(now.getTime() + SESSION_IDLE_MS, session.absoluteExpiresAt.getTime()));
    await deps.repos.sessions.touch(session.id, now, idle);
    session.lastSeenAt = now;
    session.idleExpiresAt = idle;
  }
  return { user, sessionId: session.id, session };
}

/**
 * Ends one session (logout, an admin's revoke); null when it was already gone. `effects` (an audit
 * row) are written with the end, in its unit of work, only when a session ended.
 */
export async function endSession(deps: Pick<Deps, "repos" | "db">, sessionId: string, effects: Effects | null = null) {
  if (!effects) return deps.repos.sessions.revoke(sessionId);
  return deps.db.transaction(async ({ repos }) => {
    const gone = await repos.sessions.revoke(sessionId);
    if (gone) await repos.outbox.writeEffects(effects);
    return gone;
  });
}

/** Ends every session of a user ("sign out everywhere"); how many ended. `effects` as endSession's. */
export async function endAllSessions(deps: Pick<Deps, "repos" | "db">, userId: string, effects: Effects | null = null) {
  if (!effects) return deps.repos.sessions.revokeAllForUser(userId);
  return deps.db.transaction(async ({ repos }) => {
    const n = await repos.sessions.revokeAllForUser(userId);
    if (n > 0) await repos.outbox.writeEffects(effects);
    return n;
  });
}
