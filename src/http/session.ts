// Cookie sessions on HTTP: the `signedIn` macro for portal and /auth routes, the same-origin check
// for cookie-authenticated writes, and the admin-session credential resolver for the admin guard
// (DECISIONS: Sessions and sign-in; spec: Authentication).
import { Elysia } from "elysia";
import type { Deps } from "../deps";
import { AppError } from "../shared/errors";
import { resolveSession, sessionTokenFrom, type SignedIn } from "../modules/sessions/service";
import { effectiveRole, ROLE_SCOPES } from "../modules/users/domain";
import type { CredentialResolver } from "./auth";

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/**
 * Refuses a request a browser sent from another site: the Origin header (or, without it,
 * Sec-Fetch-Site) must name BASE_URL's origin. A request with neither header does not come from a
 * browser's cross-site form or script (browsers send Origin on every cross-site POST), so it passes.
 */
export function assertSameOrigin(request: Request, baseUrl: string): void {
  const origin = request.headers.get("origin");
  if (origin !== null) {
    if (origin !== new URL(baseUrl).origin) throw new AppError("CROSS_SITE_REQUEST");
    return;
  }
  const site = request.headers.get("sec-fetch-site");
  if (site !== null && site !== "same-origin") throw new AppError("CROSS_SITE_REQUEST");
}

/** The signed-in user of a request's session cookie, or null; writes must come from our own origin. */
export async function sessionOf(deps: Deps, request: Request): Promise<SignedIn | null> {
  const token = sessionTokenFrom(request.headers.get("cookie"));
  if (token === null) return null;
  const signedIn = await resolveSession(deps, token);
  if (signedIn && !SAFE_METHODS.has(request.method)) assertSameOrigin(request, deps.config.baseUrl);
  return signedIn;
}

/**
 * `signedIn: true` on a route: 401 UNAUTHORIZED without a live session (checked before schema
 * validation, like the admin guard), 403 CROSS_SITE_REQUEST for a cross-site write; the handler
 * receives `signedIn`.
 */
export function sessionAuth(deps: Deps) {
  const checked = new WeakMap<Request, SignedIn>();
  const authenticate = async (request: Request): Promise<SignedIn> => {
    const signedIn = await sessionOf(deps, request);
    if (!signedIn) throw new AppError("UNAUTHORIZED", { message: "Sign in first." });
    return signedIn;
  };
  return new Elysia({ name: "keyward/session-auth" }).macro({
    signedIn(enabled: true) {
      void enabled;
      return {
        detail: { security: [{ sessionCookie: [] }] },
        async transform({ request }) {
          checked.set(request, await authenticate(request));
        },
        async resolve({ request }) {
          return { signedIn: checked.get(request) ?? (await authenticate(request)) };
        },
      };
    },
  });
}

/**
 * Admin sessions for the admin guard: the user's role, read on every request, maps to the scopes an
 * API key would carry (admin / support / viewer); a signed-in user without a role has no scopes and
 * is refused with 403. No cookie: null (the next resolver, or 401).
 */
export function adminSessionResolver(deps: Deps): CredentialResolver {
  return async (request) => {
    if (sessionTokenFrom(request.headers.get("cookie")) === null) return null;
    const signedIn = await sessionOf(deps, request);
    if (!signedIn) return null;
    const role = effectiveRole(signedIn.user, deps.config.adminEmails);
    return { type: "session", id: signedIn.user.id, scopes: new Set(role ? ROLE_SCOPES[role] : []), productId: null };
  };
}
