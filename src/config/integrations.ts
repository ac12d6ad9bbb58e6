// The configuration of the services Keyward calls: Stripe (docs/payments.md) and the sign-in
// providers (docs/sign-in.md). Part of src/config.ts, which calls these with its environment record.
import { ConfigError, int, optional, str, type Env } from "./env";

export interface StripeConfig {
  /** STRIPE_SECRET_KEY (sk_… or rk_…): never logged. */
  secretKey: string;
  /** STRIPE_WEBHOOK_SECRET (whsec_…): verifies POST /webhooks/stripe; null: that route answers 503. */
  webhookSecret: string | null;
  /**
   * STRIPE_API_BASE: where the SDK sends its calls (host, port, protocol), for a local Stripe fake in
   * tests or a proxy; null: api.stripe.com.
   */
  apiBase: { host: string; port: number; protocol: "http" | "https" } | null;
}

export interface OAuthClientCredentials {
  clientId: string;
  clientSecret: string;
}

/** A provider is on (non-null) when both its client id and secret are set. Endpoint URLs default to the real providers'. */
export interface OAuthConfig {
  /** `url`: github.com or a GitHub Enterprise Server (authorize and token endpoints); `apiUrl`: its REST API. */
  github: (OAuthClientCredentials & { url: string; apiUrl: string }) | null;
  google: (OAuthClientCredentials & { authUrl: string; tokenUrl: string; userinfoUrl: string }) | null;
  /** Generic OpenID Connect: endpoints come from the issuer's discovery document. `name` labels the button. */
  oidc: (OAuthClientCredentials & { issuer: string; name: string }) | null;
  /** Time limit of each call to a provider (discovery, token, user info), in milliseconds. */
  httpTimeoutMs: number;
}

export function stripeConfig(env: Env, production: boolean): StripeConfig | null {
  const secretKey = optional(env, "STRIPE_SECRET_KEY");
  const webhookSecret = optional(env, "STRIPE_WEBHOOK_SECRET");
  const base = optional(env, "STRIPE_API_BASE");
  if (secretKey === null) {
    if (webhookSecret !== null) throw new ConfigError("STRIPE_SECRET_KEY", "is required when STRIPE_WEBHOOK_SECRET is set");
    return null;
  }
  if (!/^(sk|rk)_[A-Za-z0-9_]{8,}$/.test(secretKey)) throw new ConfigError("STRIPE_SECRET_KEY", "must be a Stripe secret or restricted key (sk_… or rk_…)");
  if (webhookSecret !== null && !/^whsec_[A-Za-z0-9+/=_-]{8,}$/.test(webhookSecret)) {
    throw new ConfigError("STRIPE_WEBHOOK_SECRET", "must be a Stripe webhook signing secret (whsec_…)");
  }
  let apiBase: StripeConfig["apiBase"] = null;
  if (base !== null) {
    const url = new URL(providerUrl(env, "STRIPE_API_BASE", base, production, true));
    if (url.pathname !== "/" && url.pathname !== "") throw new ConfigError("STRIPE_API_BASE", "must be a scheme, host and port only (no path)");
    const protocol = url.protocol === "https:" ? "https" : "http";
    apiBase = { host: url.hostname.replace(/^\[|\]$/g, ""), port: url.port ? Number(url.port) : protocol === "https" ? 443 : 80, protocol };
  }
  return { secretKey, webhookSecret, apiBase };
}

/**
 * An absolute http(s) URL without query or fragment; https only in production (a provider endpoint
 * receives client secrets and authorization codes). `base`: trailing slashes dropped, paths are appended.
 */
function providerUrl(env: Env, name: string, fallback: string, production: boolean, base: boolean): string {
  const raw = str(env, name, fallback);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(name, `must be an absolute http(s) URL, got "${raw}"`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new ConfigError(name, `must be an absolute http(s) URL, got "${raw}"`);
  if (url.search !== "" || url.hash !== "") throw new ConfigError(name, "must not have a query or fragment");
  if (production && url.protocol !== "https:") throw new ConfigError(name, "must use https when NODE_ENV=production");
  return base ? raw.replace(/\/+$/, "") : raw;
}

/** Both or neither: a client id without its secret (or the reverse) is a typo, not "off". */
function credentials(idName: string, id: string | null, secretName: string, secret: string | null): OAuthClientCredentials | null {
  if (id === null && secret === null) return null;
  if (id === null) throw new ConfigError(idName, `is required when ${secretName} is set`);
  if (secret === null) throw new ConfigError(secretName, `is required when ${idName} is set`);
  return { clientId: id, clientSecret: secret };
}

export function oauthConfig(env: Env, production: boolean): OAuthConfig {
  const github = credentials(
    "OAUTH_GITHUB_CLIENT_ID",
    optional(env, "OAUTH_GITHUB_CLIENT_ID"),
    "OAUTH_GITHUB_CLIENT_SECRET",
    optional(env, "OAUTH_GITHUB_CLIENT_SECRET"),
  );
  const githubUrl = providerUrl(env, "OAUTH_GITHUB_URL", "https://github.com", production, true);
  const githubApiUrl = providerUrl(env, "OAUTH_GITHUB_API_URL", "https://api.github.com", production, true);
  const google = credentials(
    "OAUTH_GOOGLE_CLIENT_ID",
    optional(env, "OAUTH_GOOGLE_CLIENT_ID"),
    "OAUTH_GOOGLE_CLIENT_SECRET",
    optional(env, "OAUTH_GOOGLE_CLIENT_SECRET"),
  );
  const googleAuthUrl = providerUrl(env, "OAUTH_GOOGLE_AUTH_URL", "https://accounts.google.com/o/oauth2/v2/auth", production, false);
  const googleTokenUrl = providerUrl(env, "OAUTH_GOOGLE_TOKEN_URL", "https://oauth2.googleapis.com/token", production, false);
  const googleUserinfoUrl = providerUrl(env, "OAUTH_GOOGLE_USERINFO_URL", "https://openidconnect.googleapis.com/v1/userinfo", production, false);
  const oidc = credentials("OIDC_CLIENT_ID", optional(env, "OIDC_CLIENT_ID"), "OIDC_CLIENT_SECRET", optional(env, "OIDC_CLIENT_SECRET"));
  // The issuer is an identifier compared with the discovery document's `issuer`: kept as written.
  const issuer = optional(env, "OIDC_ISSUER") === null ? null : providerUrl(env, "OIDC_ISSUER", "", production, false);
  if (oidc && issuer === null) throw new ConfigError("OIDC_ISSUER", "is required when OIDC_CLIENT_ID is set");
  if (!oidc && issuer !== null) throw new ConfigError("OIDC_CLIENT_ID", "is required when OIDC_ISSUER is set");
  const name = str(env, "OIDC_NAME", "Single sign-on");
  if (name.length > 64) throw new ConfigError("OIDC_NAME", "must be at most 64 characters");
  return {
    github: github && { ...github, url: githubUrl, apiUrl: githubApiUrl },
    google: google && { ...google, authUrl: googleAuthUrl, tokenUrl: googleTokenUrl, userinfoUrl: googleUserinfoUrl },
    oidc: oidc && issuer !== null ? { ...oidc, issuer, name } : null,
    httpTimeoutMs: int(env, "OAUTH_HTTP_TIMEOUT_MS", 10_000, 100, 120_000),
  };
}
