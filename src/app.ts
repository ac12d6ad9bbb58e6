// Composes the HTTP application from Deps. No environment, no listen: main.ts and tests call this.
// Plugin order is a security property (Elysia hooks only cover routes registered after them), so the
// order below is fixed: request context and rate limits → body parsing → error envelope → docs →
// public → admin; then the lane, which runs the public license routes' own hooks (http/lane.ts).
import { Elysia } from "elysia";
import type { Deps } from "./deps";
import { beginRequest, clientIp, NO_PEER, pathOf } from "./http/request-context";
import { clientAddressResolver } from "./http/trusted-proxies";
import { errorHandler } from "./http/error-handler";
import { jsonBodyParser } from "./http/body";
import { rateLimitCheck } from "./http/rate-limit";
import { createLane, type Lane } from "./http/lane";
import { urlNulRefusal } from "./http/url-nul";
import { accessLog } from "./http/access-log";
import { apiDocs } from "./http/openapi";
import { adminGuard, apiKeyResolver } from "./http/auth";
import { adminSessionResolver, sessionAuth } from "./http/session";
import { signInRoutes } from "./modules/sign-in";
import { eventWebhooksDocument } from "./modules/webhooks/model";
import { userAdminRoutes } from "./modules/users/admin";
import { sessionAdminRoutes } from "./modules/sessions/admin";
import { healthRoutes } from "./modules/health";
import { keyRoutes } from "./modules/keys";
import { keyAdminRoutes } from "./modules/keys/admin";
import { productAdminRoutes } from "./modules/products/admin";
import { apiKeyAdminRoutes } from "./modules/api-keys/admin";
import { auditAdminRoutes } from "./modules/audit/admin";
import { feedRoutes } from "./modules/feeds";
import { downloadRoutes } from "./modules/downloads";
import { releaseAdminRoutes } from "./modules/releases/admin";
import { storageRoutes } from "./modules/storage";
import { releaseKeyAdminRoutes } from "./modules/release-keys/admin";
import { LOCAL_OBJECTS_PATH } from "./modules/storage/local";
import { planAdminRoutes } from "./modules/plans/admin";
import { addonAdminRoutes } from "./modules/addons/admin";
import { settingsAdminRoutes } from "./modules/settings/admin";
import { licenseAdminRoutes } from "./modules/license-admin/admin";
import { activationRoutes } from "./modules/activations";
import { entitlementRoutes } from "./modules/entitlements";
import { usageRoutes } from "./modules/usage";
import { floatingRoutes } from "./modules/floating";
import { activationAdminRoutes } from "./modules/activations/admin";
import { offlineAdminRoutes } from "./modules/offline/admin";
import { offlinePortalRoutes } from "./modules/offline";
import { usageAdminRoutes } from "./modules/usage/admin";
import { floatingAdminRoutes } from "./modules/floating/admin";
import { jobAdminRoutes } from "./jobs/admin";
import { acceptInvitePage } from "./http/accept-invite-page";
import { inviteRoutes, seatRoutes } from "./modules/seats";
import { seatAdminRoutes } from "./modules/seats/admin";
import { portalRoutes } from "./modules/portal";
import { INVITE_ACCEPT_PER_MINUTE } from "./modules/seats/domain";
import { emailAdminRoutes } from "./modules/email/admin";
import { lifecycleAdminRoutes } from "./modules/lifecycle/admin";
import { oauthRoutes } from "./modules/oauth";
import { webhookAdminRoutes } from "./modules/webhooks/admin";
import { STRIPE_WEBHOOK_PER_MINUTE } from "./modules/payments/domain";
import { checkoutPages, stripeWebhookRoutes, supportCheckoutRoutes } from "./modules/payments";
import { purchaseRoutes } from "./modules/payments/purchase-checkout";
import { billingAdminRoutes } from "./modules/payments/billing/admin";
import { meteringAdminRoutes } from "./modules/metering/admin";

export const API_PREFIX = "/api/v1";
export const API_VERSION = "1.1.0";
const API_TITLE = "Keyward API";

export function createApp(deps: Deps) {
  const { config, clock, logger } = deps;
  // Admin credentials: an API key (Authorization: Bearer) first, else an admin's session cookie.
  const guard = adminGuard([apiKeyResolver(deps), adminSessionResolver(deps)]);
  const resolveClient = clientAddressResolver(config.trustProxy, NO_PEER);
  const session = sessionAuth(deps);

  // Per-address limits, before any parsing (spec: Limits; DECISIONS: Abuse limits), in this order:
  // a request counts against every rule whose prefix its path has, and the first refusal answers.
  const rateLimits = rateLimitCheck(deps.rateLimiter, clock, [
    // The public SDK and feed routes, sign-in (an OAuth callback costs a call to the provider) and the portal.
    {
      bucket: "public",
      perMinute: config.rateLimitPublicPerMinute,
      prefixes: [`${API_PREFIX}/license/`, `${API_PREFIX}/releases/`, `${API_PREFIX}/auth/`, `${API_PREFIX}/portal/`],
    },
    // Invite acceptance: its own counter, 60 per minute per IP (spec: Limits).
    { bucket: "invite", perMinute: INVITE_ACCEPT_PER_MINUTE, prefixes: [`${API_PREFIX}/invites/`] },
    // Stripe's webhook: its own generous counter (Stripe sends from a few addresses and bursts when
    // it redelivers a backlog; a 429 only delays an event, Stripe retries it).
    { bucket: "stripe", perMinute: STRIPE_WEBHOOK_PER_MINUTE, prefixes: [`${API_PREFIX}/webhooks/stripe`] },
    // Opening a Stripe Checkout costs a call to Stripe's API (its rate limit is the whole service's):
    // a tighter counter per address for the two checkout routes.
    {
      bucket: "checkout",
      perMinute: config.rateLimitCheckoutPerMinute,
      prefixes: [`${API_PREFIX}/license/checkout`, `${API_PREFIX}/license/support/checkout`],
    },
  ]);

  // The request hook's decision after the request id: the rate limits, then U+0000 in the URL
  // (http/url-nul.ts), except on the lane's routes, which read neither their query nor path parameters.
  const lanePaths = new Set(LANE_PATHS);
  const admit = (request: Request, path: string, ip: string): ReturnType<typeof rateLimits> => {
    const limited = rateLimits(request, path, ip);
    if (request.method === "POST" && lanePaths.has(path)) return limited;
    return limited instanceof Promise ? limited.then((refusal) => refusal ?? urlNulRefusal(request)) : (limited ?? urlNulRefusal(request));
  };

  // normalize: false — Elysia otherwise silently strips unknown body fields; our schemas say
  // additionalProperties: false and mean it (unknown keys are a 400), and responses stay exact.
  // encodeSchema: false — no response schema uses t.Transform, and Elysia otherwise walks every
  // response through TypeBox's Encode (measured: ~6% of a verify request). Responses are still
  // validated against their schemas.
  // systemRouter: false — every other route is found by Elysia's own router, as in app.handle (the
  // tests' path), instead of Elysia also building a Bun route handler for each of its ~130 routes at
  // listen, and again after it (measured: about 7–12 ms of every start, medians of 11 restarts).
  // serve.routes — Bun's native router serves the lane's routes (filled in below, read at listen).
  const laneRoutes: Lane["routes"] = {};
  const root = new Elysia({ name: "keyward", normalize: false, encodeSchema: false, systemRouter: false, serve: { routes: laneRoutes } });
  const app = (
    root
      // 1. Request id, client address and the rate limits: one hook, before anything can fail. The
      // server is read from the instance rather than destructured from the context: a hook that
      // destructures `server` makes Elysia define an accessor on every request's context object.
      // The path comes from the context when the router put it there (the lane and Elysia's static
      // routes do, which spares reading the request's URL), from the URL otherwise.
      .onRequest((context) => {
        const { request, set } = context;
        const ctx = beginRequest(request, clientIp(request, root.server, resolveClient), clock.monotonicMs());
        set.headers["x-request-id"] = ctx.requestId;
        // Ends in `return <call>(`: Elysia decides from a hook's source text whether its answer may be
        // a promise (the PostgreSQL limiter's is), and awaits it only then (compose.ts isAsync).
        return admit(request, (context as { path?: string }).path ?? pathOf(request.url), ctx.ip);
      })
      // The access log is an info line; when info is off the hook is not registered at all, because
      // Elysia schedules an afterResponse hook for every request even if it returns at once.
      .use(accessLog(logger, clock))
      // 2. Strict JSON bodies (400 VALIDATION_ERROR for malformed JSON or a wrong content type).
      .use(jsonBodyParser(config.maxBodyBytes, [`${LOCAL_OBJECTS_PATH}/`]))
      // 3. Every failure leaves in the spec's envelope.
      .use(errorHandler(logger))
      // 4. OpenAPI 3.1 document and browsable UI (served from Keyward itself, see http/docs-ui.ts),
      // built on the first request for it.
      .use(
        apiDocs({
          uiPath: `${API_PREFIX}/docs`,
          specPath: `${API_PREFIX}/openapi.json`,
          title: API_TITLE,
          documentation: () => ({
            info: {
              title: API_TITLE,
              version: API_VERSION,
              description:
                "Licensing and software distribution. Every JSON response uses the envelope {success, data} or {success: false, error: {code, message, details}}.",
            },
            // Every event type's webhook body (OpenAPI 3.1 `webhooks`): what an endpoint receives.
            webhooks: eventWebhooksDocument(),
            // Relative to the document's own address: the path of BASE_URL ("/" unless Keyward is
            // published under a path prefix), so "try it" calls reach this service under any host name.
            servers: [{ url: new URL(config.baseUrl).pathname, description: "This Keyward service" }],
            components: {
              securitySchemes: {
                bearerAuth: { type: "http", scheme: "bearer", description: "Admin API key (kw_…)" },
                sessionCookie: {
                  type: "apiKey",
                  in: "cookie",
                  name: "session",
                  description: "Signed-in session (portal, /auth, and admin routes for users with an admin role)",
                },
                licenseKey: {
                  type: "apiKey",
                  in: "header",
                  name: "Authorization",
                  description: "`Authorization: License <license key>` (download redirect of licensed products; the `license_key` query parameter is the alternative)",
                },
              },
            },
          }),
        }),
      )
      // The portal's invite page, outside /api/v1 like the docs page (see http/accept-invite-page.ts).
      .use(acceptInvitePage())
      // Where Stripe Checkout returns the buyer (modules/payments/index.ts), outside /api/v1 too.
      .use(checkoutPages())
      .group(API_PREFIX, (api) =>
        api
          // 5. Public routes (no credential at the route layer).
          .use(healthRoutes(deps))
          .use(keyRoutes(deps))
          // The public license API (license_key in the body is the credential).
          .use(activationRoutes(deps))
          .use(entitlementRoutes(deps))
          .use(usageRoutes(deps))
          .use(floatingRoutes(deps))
          .use(supportCheckoutRoutes(deps))
          .use(feedRoutes(deps))
          .use(downloadRoutes(deps))
          .use(storageRoutes(deps))
          // Stripe's webhook (the Stripe-Signature header over the raw body is the credential).
          .use(stripeWebhookRoutes(deps))
          // Buying a license (POST /license/checkout; public rate limit of /license/).
          .use(purchaseRoutes(deps))
          // Sign-in and sessions (cookie `session`).
          .use(signInRoutes(deps))
          // Sign-in with OAuth / OpenID Connect providers (sets the session cookie).
          .use(oauthRoutes(deps))
          // Invite acceptance (public: the token is the credential) and the portal (session cookie).
          .use(inviteRoutes(deps))
          .use(seatRoutes(deps, session))
          .use(portalRoutes(deps, session))
          .use(offlinePortalRoutes(deps, session))
          // 6. Admin routes: each declares `scopes`, enforced by the guard's macro.
          .use(productAdminRoutes(deps, guard))
          .use(apiKeyAdminRoutes(deps, guard))
          .use(auditAdminRoutes(deps, guard))
          .use(planAdminRoutes(deps, guard))
          .use(addonAdminRoutes(deps, guard))
          .use(settingsAdminRoutes(deps, guard))
          .use(licenseAdminRoutes(deps, guard))
          .use(activationAdminRoutes(deps, guard))
          .use(offlineAdminRoutes(deps, guard))
          .use(usageAdminRoutes(deps, guard))
          .use(floatingAdminRoutes(deps, guard))
          .use(seatAdminRoutes(deps, guard))
          .use(keyAdminRoutes(deps, guard))
          .use(releaseKeyAdminRoutes(deps, guard))
          .use(releaseAdminRoutes(deps, guard))
          .use(jobAdminRoutes(deps, guard))
          .use(userAdminRoutes(deps, guard))
          .use(sessionAdminRoutes(deps, guard))
          .use(emailAdminRoutes(deps, guard))
          .use(lifecycleAdminRoutes(deps, guard))
          .use(meteringAdminRoutes(deps, guard))
          .use(webhookAdminRoutes(deps, guard))
          .use(billingAdminRoutes(deps, guard)),
      )
  );
  // 7. The lane (http/lane.ts): the public license API's routes run their lifecycle without Elysia's
  // per-request machinery, from Bun's native router when listening and from `handle` in process.
  // Same route declarations, hooks and validators; other spellings of these paths stay Elysia's.
  const lane = createLane(app, LANE_PATHS);
  Object.assign(laneRoutes, lane.routes);
  const handle = app.handle;
  app.handle = (request: Request) => lane.find(request)?.(request) ?? handle(request);
  return app;
}

/**
 * The routes the lane serves: the SDK calls whose credential is the license key in the body, made by
 * every client app at every start (verify) or on every metered action (usage).
 */
export const LANE_PATHS: readonly string[] = [
  "/license/activate",
  "/license/verify",
  "/license/deactivate",
  "/license/entitlements",
  "/license/usage",
  "/license/usage/status",
  "/license/floating/checkout",
  "/license/floating/heartbeat",
  "/license/floating/checkin",
].map((p) => `${API_PREFIX}${p}`);

export type App = ReturnType<typeof createApp>;
