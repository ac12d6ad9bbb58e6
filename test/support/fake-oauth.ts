// A local authorization server for sign-in tests, speaking real OAuth 2.0 (RFC 6749), PKCE (RFC 7636),
// OpenID Connect discovery and userinfo, and GitHub's flavour of both, over HTTP on 127.0.0.1:
//   GET  /.well-known/openid-configuration   discovery; the server's own URL is the issuer
//   GET  /authorize, /login/oauth/authorize  auto-approves for `fake.user`, 302 back with code+state
//   POST /token                              RFC 6749 errors (400 {error})
//   POST /login/oauth/access_token           GitHub's: errors as 200 {error}
//   GET  /userinfo                           OIDC claims: sub, email, email_verified
//   GET  /user, /user/emails                 GitHub's REST shapes
// The token endpoints check the client's id and secret (Basic or form), that the code is known, unused
// and was issued to this client for this redirect_uri, and the PKCE verifier against the S256
// challenge: a wrong or missing verifier is refused with invalid_grant. /authorize refuses a request
// without an S256 challenge, so a client that skips PKCE cannot sign in at all.
import { createHash, randomBytes } from "node:crypto";

export interface FakeUser {
  sub: string;
  /** OIDC `email` claim (null: none). */
  email: string | null;
  /** OIDC `email_verified` claim as sent (a boolean, a string, or absent when undefined). */
  emailVerified?: unknown;
  /** GitHub's GET /user/emails; default: `email` as the primary, verified as `emailVerified === true`. */
  githubEmails?: { email: string; primary: boolean; verified: boolean; visibility: string | null }[];
}

export interface FakeClient {
  id: string;
  secret: string;
  redirectUri: string;
}

export interface TokenRequestRecord {
  path: string;
  clientId: string | null;
  codeVerifier: string | null;
  outcome: "ok" | string;
}

export interface FakeOAuth {
  /** Base URL, and the OpenID Connect issuer. */
  url: string;
  /** Whom /authorize approves (read when the code is issued). */
  user: FakeUser;
  /** When set, the next /authorize answers with this `error` instead of a code. */
  denyNext: string | null;
  /** When true, token endpoints never answer (the client's time limit must end the wait). */
  hangToken: boolean;
  /** Advertise and send the RFC 9207 `iss` parameter on authorization responses. */
  issInResponse: boolean;
  /** Issuer written in the discovery document (default: `url`). */
  discoveryIssuer: string | null;
  /** Fields replaced in (or, when undefined, dropped from) the discovery document. */
  discoveryOverrides: Record<string, unknown>;
  addClient(client: FakeClient): void;
  authorizeRequests: URLSearchParams[];
  tokenRequests: TokenRequestRecord[];
  discoveryFetches: number;
  close(): Promise<void>;
}

interface IssuedCode {
  clientId: string;
  redirectUri: string;
  challenge: string;
  user: FakeUser;
  used: boolean;
}

const b64url = (b: Buffer) => b.toString("base64url");
export const s256 = (verifier: string) => b64url(createHash("sha256").update(verifier, "ascii").digest());

function json(body: unknown, status = 200): Response {
  return new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json", "cache-control": "no-store" } });
}

/** RFC 6749 §2.3.1: the Basic credentials are form-urlencoded id and secret. */
function basicCredentials(header: string | null): { id: string; secret: string } | null {
  if (!header?.startsWith("Basic ")) return null;
  const decoded = Buffer.from(header.slice(6), "base64").toString("utf8");
  const colon = decoded.indexOf(":");
  if (colon < 0) return null;
  const dec = (s: string) => decodeURIComponent(s.replaceAll("+", " "));
  return { id: dec(decoded.slice(0, colon)), secret: dec(decoded.slice(colon + 1)) };
}

export async function startFakeOAuth(): Promise<FakeOAuth> {
  const clients = new Map<string, FakeClient>();
  const codes = new Map<string, IssuedCode>();
  const accessTokens = new Map<string, FakeUser>();

  const fake: FakeOAuth = {
    url: "",
    user: { sub: "user-1", email: "someone@example.com", emailVerified: true },
    denyNext: null,
    hangToken: false,
    issInResponse: false,
    discoveryIssuer: null,
    discoveryOverrides: {},
    addClient: (c) => void clients.set(c.id, c),
    authorizeRequests: [],
    tokenRequests: [],
    discoveryFetches: 0,
    close: async () => {
      await server.stop(true);
    },
  };

  function authorize(url: URL): Response {
    const q = url.searchParams;
    fake.authorizeRequests.push(q);
    const client = clients.get(q.get("client_id") ?? "");
    // RFC 6749 §4.1.2.1: with an unknown client or redirect_uri the server must not redirect.
    if (!client) return json({ error: "invalid_client" }, 400);
    if (q.get("redirect_uri") !== client.redirectUri) return json({ error: "invalid_request", error_description: "redirect_uri mismatch" }, 400);
    const back = new URL(client.redirectUri);
    const state = q.get("state");
    if (state !== null) back.searchParams.set("state", state);
    if (fake.issInResponse) back.searchParams.set("iss", fake.url);
    const refuse = (error: string) => {
      back.searchParams.set("error", error);
      return Response.redirect(back.toString(), 302);
    };
    if (fake.denyNext !== null) {
      const error = fake.denyNext;
      fake.denyNext = null;
      return refuse(error);
    }
    if (q.get("response_type") !== "code") return refuse("unsupported_response_type");
    if (!state) return refuse("invalid_request");
    // This fake insists on PKCE with S256 (RFC 7636 §4.4.1 lets a server require it).
    const challenge = q.get("code_challenge");
    if (q.get("code_challenge_method") !== "S256" || !challenge || !/^[A-Za-z0-9_-]{43}$/.test(challenge)) return refuse("invalid_request");
    const code = b64url(randomBytes(24));
    codes.set(code, { clientId: client.id, redirectUri: client.redirectUri, challenge, user: structuredClone(fake.user), used: false });
    back.searchParams.set("code", code);
    // Like Google, which adds scope, authuser and prompt: the callback must accept parameters it does not use.
    back.searchParams.set("scope", q.get("scope") ?? "");
    back.searchParams.set("authuser", "0");
    return Response.redirect(back.toString(), 302);
  }

  async function token(req: Request, path: string, githubStyle: boolean): Promise<Response> {
    if (fake.hangToken) return new Promise<Response>(() => {});
    const form = new URLSearchParams(await req.text());
    const basic = basicCredentials(req.headers.get("authorization"));
    const clientId = basic?.id ?? form.get("client_id");
    const secret = basic?.secret ?? form.get("client_secret");
    const codeVerifier = form.get("code_verifier");
    const refuse = (error: string, status: number) => {
      fake.tokenRequests.push({ path, clientId, codeVerifier, outcome: error });
      // GitHub answers 200 with an error body; everyone else per RFC 6749 §5.2.
      return json({ error }, githubStyle ? 200 : status);
    };
    const client = clients.get(clientId ?? "");
    if (!client || client.secret !== secret) return refuse("invalid_client", 401);
    if (form.get("grant_type") !== "authorization_code") return refuse("unsupported_grant_type", 400);
    const issued = codes.get(form.get("code") ?? "");
    if (!issued || issued.used || issued.clientId !== client.id) return refuse("invalid_grant", 400);
    // Single use even when the rest fails (RFC 6749 §4.1.2).
    issued.used = true;
    if (form.get("redirect_uri") !== issued.redirectUri) return refuse("invalid_grant", 400);
    if (!codeVerifier || s256(codeVerifier) !== issued.challenge) return refuse("invalid_grant", 400);
    const accessToken = b64url(randomBytes(24));
    accessTokens.set(accessToken, issued.user);
    fake.tokenRequests.push({ path, clientId, codeVerifier, outcome: "ok" });
    return json({ access_token: accessToken, token_type: githubStyle ? "bearer" : "Bearer", expires_in: 3600, scope: "openid email" });
  }

  function bearerUser(req: Request): FakeUser | null {
    const h = req.headers.get("authorization") ?? "";
    const m = /^(?:Bearer|token) (.+)$/.exec(h);
    return m ? (accessTokens.get(m[1]!) ?? null) : null;
  }

  function githubEmails(user: FakeUser) {
    if (user.githubEmails) return user.githubEmails;
    return user.email === null ? [] : [{ email: user.email, primary: true, verified: user.emailVerified === true, visibility: "private" }];
  }

  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      const url = new URL(req.url);
      const path = url.pathname;
      if (req.method === "GET" && path === "/.well-known/openid-configuration") {
        fake.discoveryFetches++;
        return json({
          issuer: fake.discoveryIssuer ?? fake.url,
          authorization_endpoint: `${fake.url}/authorize`,
          token_endpoint: `${fake.url}/token`,
          userinfo_endpoint: `${fake.url}/userinfo`,
          jwks_uri: `${fake.url}/jwks`,
          response_types_supported: ["code"],
          subject_types_supported: ["public"],
          id_token_signing_alg_values_supported: ["RS256"],
          code_challenge_methods_supported: ["S256"],
          token_endpoint_auth_methods_supported: ["client_secret_basic", "client_secret_post"],
          authorization_response_iss_parameter_supported: fake.issInResponse,
          ...fake.discoveryOverrides,
        });
      }
      if (req.method === "GET" && (path === "/authorize" || path === "/login/oauth/authorize")) return authorize(url);
      if (req.method === "POST" && path === "/token") return token(req, path, false);
      if (req.method === "POST" && path === "/login/oauth/access_token") return token(req, path, true);
      if (req.method === "GET" && (path === "/userinfo" || path === "/user" || path === "/user/emails")) {
        const user = bearerUser(req);
        if (!user) return json({ error: "invalid_token" }, 401);
        if (path === "/user/emails") return json(githubEmails(user));
        if (path === "/user") return json({ login: user.sub, id: 1, email: user.email });
        const claims: Record<string, unknown> = { sub: user.sub };
        if (user.email !== null) claims.email = user.email;
        if (user.emailVerified !== undefined) claims.email_verified = user.emailVerified;
        return json(claims);
      }
      return json({ error: "not_found" }, 404);
    },
  });
  fake.url = `http://127.0.0.1:${server.port}`;
  return fake;
}
