// The enabled sign-in providers, built once per app from config. All three use arctic's generic
// OAuth2Client with endpoints from config: arctic's GitHub and Google classes hard-code github.com and
// googleapis.com, so neither a GitHub Enterprise Server nor the tests' local fake provider could be
// reached through them. Every flow sends `state` and an S256 PKCE challenge (GitHub accepts PKCE
// since July 2025; for Google and OIDC it is standard).
import { CodeChallengeMethod, OAuth2Client, OAuth2RequestError, UnexpectedResponseError } from "arctic";
import type { Config } from "../../config";
import type { Clock } from "../../shared/clock";
import { HOUR } from "../../shared/clock";
import { AppError } from "../../shared/errors";
import type { Logger } from "../../shared/logger";
import { callbackUrl, emailFromClaims, emailFromGitHubList, type EmailVerdict, type ProviderId } from "./domain";

export interface OAuthProvider {
  id: ProviderId;
  /** Label for a sign-in button. */
  name: string;
  /** Where to send the browser: the provider's authorization endpoint with state and the PKCE challenge. */
  authorizationUrl(state: string, codeVerifier: string): Promise<URL>;
  /**
   * Exchanges the authorization code (with the PKCE verifier) for an access token and asks the
   * provider for the account's email. `iss`: the callback's RFC 9207 issuer parameter, if sent.
   * Throws AppError OAUTH_FAILED when the provider refuses, fails or times out.
   */
  verifiedEmail(input: { code: string; codeVerifier: string; iss: string | null }): Promise<EmailVerdict>;
}

export type OAuthProviders = ReadonlyMap<ProviderId, OAuthProvider>;

/** Why a provider call failed: a stable word for the error's details and the log, never provider text. */
export type FailureReason = "discovery" | "token" | "userinfo" | "issuer_mismatch";

function failure(reason: FailureReason): AppError {
  return new AppError("OAUTH_FAILED", { details: { reason } });
}

interface Http {
  timeoutMs: number;
  logger: Logger;
}

/** A GET returning JSON, with the configured time limit. Any failure is `reason`. */
async function getJson(http: Http, provider: ProviderId, reason: FailureReason, url: string, headers: Record<string, string>): Promise<unknown> {
  let res: Response;
  try {
    res = await fetch(url, { headers: { accept: "application/json", "user-agent": "keyward", ...headers }, signal: AbortSignal.timeout(http.timeoutMs), redirect: "error" });
  } catch (e) {
    http.logger.warn("oauth provider unreachable", { provider, reason, error: (e as Error).name });
    throw failure(reason);
  }
  if (res.status !== 200) {
    await res.body?.cancel();
    http.logger.warn("oauth provider refused", { provider, reason, status: res.status });
    throw failure(reason);
  }
  try {
    return await res.json();
  } catch {
    http.logger.warn("oauth provider sent no JSON", { provider, reason });
    throw failure(reason);
  }
}

/**
 * arctic's token request takes no AbortSignal, so the wait is bounded here: past the limit the
 * sign-in fails, and the abandoned request ends on its own (its late result is ignored).
 */
async function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** The access token for `code`, or OAUTH_FAILED (wrong code, wrong PKCE verifier, bad client, timeout). */
async function exchange(http: Http, provider: ProviderId, client: OAuth2Client, tokenUrl: string, code: string, codeVerifier: string): Promise<string> {
  try {
    const tokens = await withTimeout(client.validateAuthorizationCode(tokenUrl, code, codeVerifier), http.timeoutMs);
    // GitHub reports token errors as 200 with an `error` field (arctic's own GitHub class checks this;
    // the generic client does not).
    if ("error" in tokens.data) {
      const code = (tokens.data as { error?: unknown }).error;
      http.logger.warn("oauth token exchange refused", { provider, error: typeof code === "string" ? code.slice(0, 64) : "unknown" });
      throw failure("token");
    }
    return tokens.accessToken();
  } catch (e) {
    if (e instanceof AppError) throw e;
    const detail =
      e instanceof OAuth2RequestError ? { error: e.code.slice(0, 64) } : e instanceof UnexpectedResponseError ? { status: e.status } : { error: (e as Error).message.slice(0, 80) };
    http.logger.warn("oauth token exchange failed", { provider, ...detail });
    throw failure("token");
  }
}

function claimsOf(body: unknown): Record<string, unknown> {
  return typeof body === "object" && body !== null && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
}

function github(config: NonNullable<Config["oauth"]["github"]>, redirectUri: string, http: Http): OAuthProvider {
  const client = new OAuth2Client(config.clientId, config.clientSecret, redirectUri);
  return {
    id: "github",
    name: "GitHub",
    async authorizationUrl(state, codeVerifier) {
      // user:email: the only scope GET /user/emails needs.
      return client.createAuthorizationURLWithPKCE(`${config.url}/login/oauth/authorize`, state, CodeChallengeMethod.S256, codeVerifier, ["user:email"]);
    },
    async verifiedEmail({ code, codeVerifier }) {
      const accessToken = await exchange(http, "github", client, `${config.url}/login/oauth/access_token`, code, codeVerifier);
      // GET /user's `email` is the public profile address, not necessarily verified; /user/emails says.
      const list = await getJson(http, "github", "userinfo", `${config.apiUrl}/user/emails`, {
        authorization: `Bearer ${accessToken}`,
        accept: "application/vnd.github+json",
        "x-github-api-version": "2022-11-28",
      });
      return emailFromGitHubList(list);
    },
  };
}

function google(config: NonNullable<Config["oauth"]["google"]>, redirectUri: string, http: Http): OAuthProvider {
  const client = new OAuth2Client(config.clientId, config.clientSecret, redirectUri);
  return {
    id: "google",
    name: "Google",
    async authorizationUrl(state, codeVerifier) {
      return client.createAuthorizationURLWithPKCE(config.authUrl, state, CodeChallengeMethod.S256, codeVerifier, ["openid", "email"]);
    },
    async verifiedEmail({ code, codeVerifier }) {
      const accessToken = await exchange(http, "google", client, config.tokenUrl, code, codeVerifier);
      const claims = await getJson(http, "google", "userinfo", config.userinfoUrl, { authorization: `Bearer ${accessToken}` });
      return emailFromClaims(claimsOf(claims));
    },
  };
}

interface Discovery {
  authorizationEndpoint: string;
  tokenEndpoint: string;
  userinfoEndpoint: string;
  /** RFC 9207: the provider adds `iss` to its authorization responses. */
  issInResponse: boolean;
}

/** Issuers compare as written apart from a trailing slash (Authentik's has one, Keycloak's has none). */
const sameIssuer = (a: string, b: string) => a.replace(/\/+$/, "") === b.replace(/\/+$/, "");

/** How long a discovery document is trusted before it is fetched again. */
const DISCOVERY_TTL_MS = HOUR;

function oidc(config: NonNullable<Config["oauth"]["oidc"]>, redirectUri: string, http: Http, clock: Clock): OAuthProvider {
  const client = new OAuth2Client(config.clientId, config.clientSecret, redirectUri);
  const issuerUrl = new URL(config.issuer);
  let cached: { at: number; doc: Discovery } | null = null;
  let inFlight: Promise<Discovery> | null = null;

  /** A discovery field as an endpoint URL; http only when the issuer itself is http (local development, the tests' fake). */
  const endpoint = (doc: Record<string, unknown>, field: string): string | null => {
    const raw = doc[field];
    if (typeof raw !== "string" || !URL.canParse(raw)) return null;
    const protocol = new URL(raw).protocol;
    return protocol === "https:" || (protocol === "http:" && issuerUrl.protocol === "http:") ? raw : null;
  };

  async function load(): Promise<Discovery> {
    // OpenID Connect Discovery 1.0 §4: the issuer with any trailing "/" removed, then the well-known path.
    const url = `${config.issuer.replace(/\/+$/, "")}/.well-known/openid-configuration`;
    const doc = claimsOf(await getJson(http, "oidc", "discovery", url, {}));
    // §4.3: the document's issuer must be the one configured, or it speaks for someone else.
    if (typeof doc.issuer !== "string" || !sameIssuer(doc.issuer, config.issuer)) {
      http.logger.warn("oidc discovery names another issuer", { configured: config.issuer, found: typeof doc.issuer === "string" ? doc.issuer.slice(0, 200) : null });
      throw failure("discovery");
    }
    const authorizationEndpoint = endpoint(doc, "authorization_endpoint");
    const tokenEndpoint = endpoint(doc, "token_endpoint");
    const userinfoEndpoint = endpoint(doc, "userinfo_endpoint");
    if (!authorizationEndpoint || !tokenEndpoint || !userinfoEndpoint) {
      const unusable = Object.entries({ authorization_endpoint: authorizationEndpoint, token_endpoint: tokenEndpoint, userinfo_endpoint: userinfoEndpoint })
        .filter(([, v]) => v === null)
        .map(([k]) => k);
      http.logger.warn("oidc discovery lacks a usable endpoint", { unusable });
      throw failure("discovery");
    }
    return { authorizationEndpoint, tokenEndpoint, userinfoEndpoint, issInResponse: doc.authorization_response_iss_parameter_supported === true };
  }

  async function discovery(): Promise<Discovery> {
    const now = clock.nowMs();
    if (cached && now - cached.at < DISCOVERY_TTL_MS) return cached.doc;
    // Concurrent sign-ins share one fetch; a failure is not cached, the next sign-in tries again.
    inFlight ??= load()
      .then((doc) => {
        cached = { at: clock.nowMs(), doc };
        return doc;
      })
      .finally(() => {
        inFlight = null;
      });
    return inFlight;
  }

  return {
    id: "oidc",
    name: config.name,
    async authorizationUrl(state, codeVerifier) {
      const doc = await discovery();
      return client.createAuthorizationURLWithPKCE(doc.authorizationEndpoint, state, CodeChallengeMethod.S256, codeVerifier, ["openid", "email"]);
    },
    async verifiedEmail({ code, codeVerifier, iss }) {
      const doc = await discovery();
      // RFC 9207 (mix-up defence): a response naming another issuer is refused before the code is spent.
      if ((iss !== null && !sameIssuer(iss, config.issuer)) || (iss === null && doc.issInResponse)) throw failure("issuer_mismatch");
      const accessToken = await exchange(http, "oidc", client, doc.tokenEndpoint, code, codeVerifier);
      const claims = await getJson(http, "oidc", "userinfo", doc.userinfoEndpoint, { authorization: `Bearer ${accessToken}` });
      return emailFromClaims(claimsOf(claims));
    },
  };
}

/** The enabled providers in button order: GitHub, Google, then the OpenID Connect one. */
export function createProviders(config: Readonly<Config>, clock: Clock, logger: Logger): OAuthProviders {
  const http: Http = { timeoutMs: config.oauth.httpTimeoutMs, logger };
  const out = new Map<ProviderId, OAuthProvider>();
  const { github: gh, google: gg, oidc: od } = config.oauth;
  if (gh) out.set("github", github(gh, callbackUrl(config.baseUrl, "github"), http));
  if (gg) out.set("google", google(gg, callbackUrl(config.baseUrl, "google"), http));
  if (od) out.set("oidc", oidc(od, callbackUrl(config.baseUrl, "oidc"), http, clock));
  return out;
}
