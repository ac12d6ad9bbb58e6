// Public sign-in routes for OAuth 2.0 / OpenID Connect providers (docs/sign-in.md).
import { Elysia } from "elysia";
import { t, withHeaders } from "../../http/schema";
import type { Deps } from "../../deps";
import { Envelope, errors, ok } from "../../http/envelope";
import { requestContext } from "../../http/request-context";
import { errorResponse } from "../../http/error-handler";
import { isAppError } from "../../shared/errors";
import { clearFlowCookie, cookieValue, FLOW_COOKIE, flowCookieScope } from "./domain";
import { CallbackQuery, ProviderList, ProviderParams, StartQuery } from "./model";
import { createProviders } from "./providers";
import { finishSignIn, listProviders, startSignIn } from "./service";

// Redirects, not envelopes: the browser follows them (to the provider, then back into the app).
// Never cached: each carries a one-time state and its own cookie.
function redirect(location: string, cookies: string[]): Response {
  const headers = new Headers({ location, "cache-control": "no-store" });
  for (const c of cookies) headers.append("set-cookie", c);
  return new Response(null, { status: 302, headers });
}

const Redirect = (description: string, location: string) =>
  withHeaders(t.Void({ description }), {
    Location: t.String({ description: location }),
    "Set-Cookie": t.String({ description: "The sealed flow cookie `oauth_flow` (set at start; cleared by the callback, whether it succeeds or fails)" }),
  });

export function oauthRoutes(deps: Deps) {
  // Built once per app: the OpenID Connect discovery cache lives in it.
  const providers = createProviders(deps.config, deps.clock, deps.logger);
  return new Elysia({ name: "keyward/oauth" })
    .get("/auth/providers", () => ok({ providers: listProviders(deps, providers).map((p) => ({ id: p.id, name: p.name, start_url: p.startUrl })) }), {
      response: { 200: Envelope(ProviderList), ...errors() },
      detail: { tags: ["Sign-in"], summary: "The enabled OAuth / OpenID Connect sign-in providers, for a sign-in page" },
    })
    .get(
      "/auth/oauth/:provider/start",
      async ({ params, query }) => {
        const { location, setCookie } = await startSignIn(deps, providers, { provider: params.provider, returnTo: query.return_to });
        return redirect(location, [setCookie]);
      },
      {
        params: ProviderParams,
        query: StartQuery,
        response: {
          302: Redirect("To the provider's authorization endpoint, with state and an S256 PKCE challenge", "The provider's authorization URL"),
          ...errors(404),
        },
        detail: {
          tags: ["Sign-in"],
          summary:
            "Start signing in with a provider: 302 to it. 404 for an unknown or disabled provider; 400 VALIDATION_ERROR when return_to is not a path on this site",
        },
      },
    )
    .get(
      "/auth/oauth/:provider/callback",
      async ({ params, query, request }) => {
        try {
          const { location, setCookies } = await finishSignIn(deps, providers, {
            provider: params.provider,
            code: query.code,
            state: query.state,
            error: query.error,
            iss: query.iss,
            flowCookie: cookieValue(request.headers.get("cookie"), FLOW_COOKIE),
            ip: requestContext(request).ip,
            userAgent: request.headers.get("user-agent"),
          });
          return redirect(location, setCookies);
        } catch (e) {
          // A callback that fails ends its flow too: the browser drops the flow cookie, and a new
          // sign-in starts from scratch.
          if (!isAppError(e)) throw e;
          return errorResponse(request, e.code, e.message, e.details, { "set-cookie": clearFlowCookie(flowCookieScope(deps.config.baseUrl)) });
        }
      },
      {
        params: ProviderParams,
        query: CallbackQuery,
        response: {
          302: Redirect("Signed in: the `session` cookie is set and the browser goes to return_to", "The start's return_to path"),
          ...errors(403, 404),
        },
        detail: {
          tags: ["Sign-in"],
          summary:
            "The provider's redirect back: checks state and PKCE, requires a verified email, opens a session. 400 OAUTH_STATE_MISMATCH, 400 OAUTH_FAILED, 403 OAUTH_EMAIL_UNVERIFIED",
        },
      },
    );
}
