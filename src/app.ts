// Composes the HTTP application from Deps. No environment, no listen: main.ts and tests call this.
// Plugin order is a security property (Elysia hooks only cover routes registered after them), so the
// order below is fixed: request context → body parsing → error envelope → docs → public → admin.
import { Elysia } from "elysia";
import { openapi } from "@elysiajs/openapi";
import "./http/formats"; // after the openapi plugin: replaces its per-call uuid format check
import type { Deps } from "./deps";
import { beginRequest, clientIp, requestContext } from "./http/request-context";
import { errorHandler } from "./http/error-handler";
import { jsonBodyParser } from "./http/body";
import { adminGuard } from "./http/auth";
import { apiKeyResolver } from "./modules/api-keys/service";
import { healthRoutes } from "./modules/health";
import { keyRoutes } from "./modules/keys";
import { keyAdminRoutes } from "./modules/keys/admin";
import { productAdminRoutes } from "./modules/products/admin";
import { apiKeyAdminRoutes } from "./modules/api-keys/admin";
import { auditAdminRoutes } from "./modules/audit/admin";
import { licenseApiRoutes } from "./modules/license-api";
import { licenseApiAdminRoutes } from "./modules/license-api/admin";

export const API_PREFIX = "/api/v1";
export const API_VERSION = "1.1.0";

export function createApp(deps: Deps) {
  const { config, clock, logger } = deps;
  // Admin credentials: API keys now; an admin session resolver joins this list later.
  const guard = adminGuard([apiKeyResolver(deps)]);

  return (
    new Elysia({ name: "keyward" })
      // 1. Request id and client address, before anything can fail.
      .onRequest(({ request, server, set }) => {
        const ctx = beginRequest(request, clientIp(request, server, config.trustProxy), clock.monotonicMs());
        set.headers["x-request-id"] = ctx.requestId;
      })
      .onAfterResponse({ as: "global" }, ({ request, set }) => {
        const ctx = requestContext(request);
        logger.info("request", {
          requestId: ctx.requestId,
          method: request.method,
          path: new URL(request.url).pathname,
          status: ctx.status ?? set.status ?? 200,
          ms: Math.round((clock.monotonicMs() - ctx.startedAt) * 10) / 10,
          ip: ctx.ip,
        });
      })
      // 2. Strict JSON bodies (400 VALIDATION_ERROR for malformed JSON or a wrong content type).
      .use(jsonBodyParser(config.maxBodyBytes))
      // 3. Every failure leaves in the spec's envelope.
      .use(errorHandler(logger))
      // 4. OpenAPI 3.1 document and browsable UI.
      .use(
        openapi({
          path: `${API_PREFIX}/docs`,
          specPath: `${API_PREFIX}/openapi.json`,
          documentation: {
            info: {
              title: "Keyward API",
              version: API_VERSION,
              description:
                "Licensing and software distribution. Every JSON response uses the envelope {success, data} or {success: false, error: {code, message, details}}.",
            },
            components: {
              securitySchemes: {
                bearerAuth: { type: "http", scheme: "bearer", description: "Admin API key (kw_…)" },
              },
            },
          },
        }),
      )
      .group(API_PREFIX, (api) =>
        api
          // 5. Public routes (no credential at the route layer).
          .use(healthRoutes(deps))
          .use(keyRoutes(deps))
          .use(licenseApiRoutes(deps))
          // 6. Admin routes: each declares `scopes`, enforced by the guard's macro.
          .use(productAdminRoutes(deps, guard))
          .use(apiKeyAdminRoutes(deps, guard))
          .use(auditAdminRoutes(deps, guard))
          .use(keyAdminRoutes(deps, guard))
          .use(licenseApiAdminRoutes(deps, guard)),
      )
  );
}

export type App = ReturnType<typeof createApp>;
