// Sign-in with an OAuth 2.0 / OpenID Connect provider (docs/sign-in.md): start sends the browser to
// the provider with `state` and a PKCE challenge, remembered in a sealed cookie; the callback checks
// both, takes the email only when the provider says it is verified, and opens a session.
import { generateCodeVerifier, generateState } from "arctic";
import type { Deps } from "../../deps";
import { constantTimeEqual } from "../../crypto/hash";
import { AppError, validationError } from "../../shared/errors";
import { signIn } from "../sessions/service";
import {
  clearFlowCookie,
  flowCookieScope,
  FLOW_TTL_MS,
  isProviderId,
  safeReturnTo,
  setFlowCookie,
  startPath,
  type ProviderId,
} from "./domain";
import { openFlow, sealFlow } from "./flow";
import type { OAuthProvider, OAuthProviders } from "./providers";

export interface ProviderSummary {
  id: ProviderId;
  name: string;
  /** Absolute URL a sign-in page links to (append `?return_to=/path`). */
  startUrl: string;
}

export function listProviders(deps: Deps, providers: OAuthProviders): ProviderSummary[] {
  return [...providers.values()].map((p) => ({ id: p.id, name: p.name, startUrl: `${deps.config.baseUrl}${startPath(p.id)}` }));
}

/** An unknown provider and a known but unconfigured one answer alike: 404. */
function providerOf(providers: OAuthProviders, id: string): OAuthProvider {
  const provider = isProviderId(id) ? providers.get(id) : undefined;
  if (!provider) throw new AppError("NOT_FOUND", { message: "No such sign-in provider is enabled." });
  return provider;
}

export async function startSignIn(
  deps: Deps,
  providers: OAuthProviders,
  input: { provider: string; returnTo: string | undefined },
): Promise<{ location: string; setCookie: string }> {
  const provider = providerOf(providers, input.provider);
  const returnTo = safeReturnTo(input.returnTo);
  // An open redirect through the sign-in would hand phishing pages a trusted first hop.
  if (returnTo === null) throw validationError({ return_to: "must be a path on this site, such as /portal" });
  const state = generateState();
  const codeVerifier = generateCodeVerifier();
  const url = await provider.authorizationUrl(state, codeVerifier);
  const sealed = sealFlow(deps.secrets.subkey("oauthFlowEncryption"), {
    provider: provider.id,
    state,
    codeVerifier,
    returnTo,
    expiresAtMs: deps.clock.nowMs() + FLOW_TTL_MS,
  });
  return { location: url.toString(), setCookie: setFlowCookie(sealed, flowCookieScope(deps.config.baseUrl)) };
}

export interface CallbackInput {
  provider: string;
  code: string | undefined;
  state: string | undefined;
  /** The provider's `error` parameter (the user declined, or the request was refused). */
  error: string | undefined;
  /** RFC 9207 issuer parameter, if the provider sends one. */
  iss: string | undefined;
  /** The flow cookie's value, if the browser sent it. */
  flowCookie: string | null;
  ip: string | null;
  userAgent: string | null;
}

function stateMismatch(reason: "no_flow" | "expired" | "provider" | "state"): AppError {
  return new AppError("OAUTH_STATE_MISMATCH", { details: { reason } });
}

export async function finishSignIn(
  deps: Deps,
  providers: OAuthProviders,
  input: CallbackInput,
): Promise<{ location: string; setCookies: string[] }> {
  const provider = providerOf(providers, input.provider);
  // The flow first: a callback this browser did not start (login CSRF, a replayed or forged link)
  // is refused before anything reaches the provider.
  const flow = input.flowCookie ? openFlow(deps.secrets.subkey("oauthFlowEncryption"), input.flowCookie) : null;
  if (!flow) throw stateMismatch("no_flow");
  if (deps.clock.nowMs() >= flow.expiresAtMs) throw stateMismatch("expired");
  if (flow.provider !== provider.id) throw stateMismatch("provider");
  if (input.state === undefined || !constantTimeEqual(input.state, flow.state)) throw stateMismatch("state");
  if (input.error !== undefined) {
    // RFC 6749 §4.1.2.1 error codes are short ASCII words; anything else is not echoed.
    const error = /^[\x20-\x7e]{1,64}$/.test(input.error) ? input.error : "invalid";
    throw new AppError("OAUTH_FAILED", { details: { reason: "provider_error", error } });
  }
  if (input.code === undefined || input.code === "") throw new AppError("OAUTH_FAILED", { details: { reason: "no_code" } });

  const verdict = await provider.verifiedEmail({ code: input.code, codeVerifier: flow.codeVerifier, iss: input.iss ?? null });
  if ("refused" in verdict) {
    deps.logger.info("oauth sign-in refused: no verified email", { provider: provider.id, reason: verdict.refused });
    throw new AppError("OAUTH_EMAIL_UNVERIFIED", { details: { reason: verdict.refused } });
  }
  const { setCookie } = await deps.db.transaction((tx) => signIn(tx, {
    email: verdict.email,
    method: `oauth:${provider.id}`,
    ip: input.ip,
    userAgent: input.userAgent,
  }));
  return { location: flow.returnTo, setCookies: [setCookie, clearFlowCookie(flowCookieScope(deps.config.baseUrl))] };
}
