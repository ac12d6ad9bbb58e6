// Pure rules of the OAuth / OpenID Connect sign-in (docs/sign-in.md): where the flow may return to,
// the flow cookie's shape, and which provider answers name a verified email address.
import { MINUTE } from "../../shared/clock";
import { cookieScope, scopedCookie, type CookieScope } from "../../shared/cookies";
export { cookieValue, type CookieScope } from "../../shared/cookies";

/** The three providers Keyward knows (DECISIONS: Sessions and sign-in). */
export const PROVIDER_IDS = ["github", "google", "oidc"] as const;
export type ProviderId = (typeof PROVIDER_IDS)[number];

export function isProviderId(s: string): s is ProviderId {
  return (PROVIDER_IDS as readonly string[]).includes(s);
}

/** Routes under the /api/v1 prefix (src/app.ts API_PREFIX); the provider calls back here. */
export const OAUTH_PATH = "/api/v1/auth/oauth";

export function startPath(id: ProviderId): string {
  return `${OAUTH_PATH}/${id}/start`;
}

/** The redirect_uri registered at the provider: absolute, under BASE_URL. */
export function callbackUrl(baseUrl: string, id: ProviderId): string {
  return `${baseUrl}${OAUTH_PATH}/${id}/callback`;
}

/** Name of the short-lived cookie that carries a flow from start to callback (sealed, see ./flow.ts). */
export const FLOW_COOKIE = "oauth_flow";
/** How long a started sign-in may take at the provider. */
export const FLOW_TTL_MS = 10 * MINUTE;

export const RETURN_TO_MAX = 2048;

/**
 * `return_to` as a local path, or null when it could leave this site. Only "/path…" is accepted:
 * "//evil.example" and "/\evil.example" are protocol-relative to browsers (which read "\" as "/"),
 * tabs and newlines are dropped by URL parsers ("/\t/evil" becomes "//evil"), and anything with a
 * scheme is absolute. Unset or empty: "/".
 */
export function safeReturnTo(raw: string | undefined): string | null {
  if (raw === undefined || raw === "") return "/";
  if (raw.length > RETURN_TO_MAX) return null;
  if (!raw.startsWith("/") || raw.startsWith("//")) return null;
  // Backslashes, whitespace and control characters: none belongs in a path we hand back.
  if (/[\\\s\u0000-\u001f\u007f]/.test(raw)) return null;
  const probe = "http://return-to.invalid";
  try {
    if (new URL(raw, probe).origin !== probe) return null;
  } catch {
    return null;
  }
  return raw;
}

/** The flow cookie goes to the OAuth routes under BASE_URL's path only. */
export function flowCookieScope(baseUrl: string): CookieScope {
  return cookieScope(baseUrl, OAUTH_PATH);
}

// SameSite=Lax, not Strict: the callback is a top-level navigation from the provider's site, and a
// Strict cookie would not be sent with it. HttpOnly: scripts never see the sealed flow.
export function setFlowCookie(sealed: string, scope: CookieScope): string {
  return scopedCookie(FLOW_COOKIE, sealed, FLOW_TTL_MS / 1000, scope, "Lax");
}

export function clearFlowCookie(scope: CookieScope): string {
  return scopedCookie(FLOW_COOKIE, "", 0, scope, "Lax");
}

/** What a provider said about the account's email. */
export type EmailVerdict = { email: string } | { refused: "missing" | "unverified" };

const EMAIL_MAX = 320;

function plausibleEmail(v: unknown): v is string {
  return typeof v === "string" && v.length <= EMAIL_MAX && /^[^\s@]+@[^\s@]+$/.test(v.trim());
}

/**
 * OpenID Connect claims (userinfo): the email only when `email_verified` is true. Some providers
 * (AWS Cognito among them) send the boolean as the string "true"; anything else is unverified.
 */
export function emailFromClaims(claims: Record<string, unknown>): EmailVerdict {
  if (!plausibleEmail(claims.email)) return { refused: "missing" };
  const verified = claims.email_verified === true || claims.email_verified === "true";
  return verified ? { email: claims.email.trim() } : { refused: "unverified" };
}

/** GitHub's GET /user/emails: the primary address, and only when GitHub marks it verified. */
export function emailFromGitHubList(list: unknown): EmailVerdict {
  if (!Array.isArray(list)) return { refused: "missing" };
  const primary = list.find((e) => typeof e === "object" && e !== null && (e as { primary?: unknown }).primary === true) as
    | { email?: unknown; verified?: unknown }
    | undefined;
  if (!primary || !plausibleEmail(primary.email)) return { refused: "missing" };
  return primary.verified === true ? { email: primary.email.trim() } : { refused: "unverified" };
}
