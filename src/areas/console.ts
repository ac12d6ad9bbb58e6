// The console area: what people use. The admin API, sign-in (codes, OAuth, sessions), the customer
// portal and invites, payments (Stripe's webhook, checkouts and their pages) and the API document.
// Loaded with the first request for one of its paths (src/app.ts, CONSOLE_PREFIXES), not at start:
// its modules, schemas and ~110 routes are most of what a start would otherwise compose, and a node
// that only serves client apps never needs them.
import type { AnyElysia } from "elysia";
import type { Deps } from "../deps";
import { API_PREFIX, type Pipeline } from "../http/pipeline";
import { apiDocs } from "../http/openapi";
import { adminGuard, apiKeyResolver } from "../http/auth";
import { adminSessionResolver, sessionAuth } from "../http/session";
import { acceptInvitePage } from "../http/accept-invite-page";
import { signInRoutes } from "../modules/sign-in";
import { eventWebhooksDocument } from "../modules/webhooks/model";
import { userAdminRoutes } from "../modules/users/admin";
import { sessionAdminRoutes } from "../modules/sessions/admin";
import { keyAdminRoutes } from "../modules/keys/admin";
import { productAdminRoutes } from "../modules/products/admin";
import { apiKeyAdminRoutes } from "../modules/api-keys/admin";
import { auditAdminRoutes } from "../modules/audit/admin";
import { releaseAdminRoutes } from "../modules/releases/admin";
import { releaseKeyAdminRoutes } from "../modules/release-keys/admin";
import { planAdminRoutes } from "../modules/plans/admin";
import { addonAdminRoutes } from "../modules/addons/admin";
import { settingsAdminRoutes } from "../modules/settings/admin";
import { licenseAdminRoutes } from "../modules/license-admin/admin";
import { activationAdminRoutes } from "../modules/activations/admin";
import { offlineAdminRoutes } from "../modules/offline/admin";
import { offlinePortalRoutes } from "../modules/offline";
import { usageAdminRoutes } from "../modules/usage/admin";
import { floatingAdminRoutes } from "../modules/floating/admin";
import { jobAdminRoutes } from "../jobs/admin";
import { inviteRoutes, seatRoutes } from "../modules/seats";
import { seatAdminRoutes } from "../modules/seats/admin";
import { portalRoutes } from "../modules/portal";
import { emailAdminRoutes } from "../modules/email/admin";
import { lifecycleAdminRoutes } from "../modules/lifecycle/admin";
import { oauthRoutes } from "../modules/oauth";
import { webhookAdminRoutes } from "../modules/webhooks/admin";
import { checkoutPages, stripeWebhookRoutes, supportCheckoutRoutes } from "../modules/payments";
import { purchaseRoutes } from "../modules/payments/purchase-checkout";
import { billingAdminRoutes } from "../modules/payments/billing/admin";
import { meteringAdminRoutes } from "../modules/metering/admin";

export const API_VERSION = "1.1.0";
const API_TITLE = "Keyward API";

/** `documented`: every area's app, for the OpenAPI document (asked for when it is first built). */
export function consoleArea(deps: Deps, pipeline: Pipeline, documented: () => Promise<readonly AnyElysia[]>) {
  const { config } = deps;
  // Admin credentials: an API key (Authorization: Bearer) first, else an admin's session cookie.
  const guard = adminGuard([apiKeyResolver(deps), adminSessionResolver(deps)]);
  const session = sessionAuth(deps);
  return (
    pipeline
      .area("keyward/console")
      // OpenAPI 3.1 document and browsable UI (served from Keyward itself, see http/docs-ui.ts), built
      // on the first request for it, over every area's routes.
      .use(
        apiDocs({
          uiPath: `${API_PREFIX}/docs`,
          specPath: `${API_PREFIX}/openapi.json`,
          title: API_TITLE,
          apps: documented,
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
          // Renewing support (POST /license/support/checkout: the license key is the credential).
          .use(supportCheckoutRoutes(deps))
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
          // Admin routes: each declares `scopes`, enforced by the guard's macro.
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
}
