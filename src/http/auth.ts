// The admin guard. Credentials are resolved by a chain of resolvers (API key now, admin session
// later), and every admin route declares the scopes it accepts with the `scopes` macro. The route
// table test (test/http/auth-matrix.test.ts) proves every /admin route carries it.
import { Elysia } from "elysia";
import { AppError } from "../shared/errors";
import { acceptedScopes, hasAnyScope, type Actor, type Credential, type Scope } from "../shared/actor";
import type { Deps } from "../deps";
import { authenticateApiKey } from "../modules/api-keys/service";
import { requestContext } from "./request-context";

export type { Credential };
/** Returns a credential, null when this resolver's credential is absent; throws UNAUTHORIZED when present but invalid. */
export type CredentialResolver = (request: Request) => Promise<Credential | null> | Credential | null;

export function adminGuard(resolvers: readonly CredentialResolver[]) {
  /** Checks the credential and the route's scopes; throws UNAUTHORIZED / INSUFFICIENT_SCOPE. */
  const authenticate = async (request: Request, declared: readonly Scope[]): Promise<Credential> => {
    const accepted = acceptedScopes(request.method, declared);
    let credential: Credential | null = null;
    for (const resolve of resolvers) {
      credential = await resolve(request);
      if (credential) break;
    }
    if (!credential) throw new AppError("UNAUTHORIZED");
    // Fail closed: a key without scopes, or without one this route accepts, is refused.
    if (!hasAnyScope(credential, accepted)) {
      throw new AppError("INSUFFICIENT_SCOPE", {
        details: { required_any_of: ["admin", ...accepted.filter((s) => s !== "admin")] },
      });
    }
    return credential;
  };
  const checked = new WeakMap<Request, Credential>();

  return new Elysia({ name: "keyward/admin-guard" }).macro({
    scopes(accepted: readonly Scope[]) {
      return {
        detail: { security: [{ bearerAuth: [] }, { sessionCookie: [] }] },
        // transform runs before schema validation, so a caller without a valid credential gets
        // 401/403 for any parseable request, never a 400 describing the route's schema. (Body
        // parsing itself comes earlier: unparseable JSON is a 400 for everyone.)
        async transform({ request }) {
          checked.set(request, await authenticate(request, accepted));
        },
        async resolve({ request }) {
          const credential = checked.get(request) ?? (await authenticate(request, accepted));
          const ctx = requestContext(request);
          const actor: Actor = { ...credential, ip: ctx.ip, requestId: ctx.requestId };
          return { actor };
        },
      };
    },
  });
}

/** The resolver for `Authorization: Bearer kw_…` (API keys). */
export function apiKeyResolver(deps: Deps): CredentialResolver {
  return async (request) => {
    const token = bearerToken(request);
    return token === null ? null : authenticateApiKey(deps, token);
  };
}

/** Extracts a bearer token; null when the header is absent or another scheme. */
export function bearerToken(request: Request): string | null {
  const h = request.headers.get("authorization");
  if (!h) return null;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(h);
  return m ? m[1]! : null;
}

export type AdminGuard = ReturnType<typeof adminGuard>;
