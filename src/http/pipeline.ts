// The request pipeline every area's routes run behind: one instance of each hook, in one fixed order.
// Each area (src/areas) is an Elysia app of its own, started from `pipeline.area(name)`, so an area
// loaded later (the console, on its first request) runs exactly the hooks the client area runs.
// Plugin order is a security property (Elysia hooks only cover routes registered after them), so
// the order below is fixed: request id, client address and the rate limits → access log → body
// parsing → error envelope; the area's routes come after.
import { Elysia } from "elysia";
import type { Server } from "bun";
import type { Deps } from "../deps";
import { beginRequest, clientIp, NO_PEER, pathOf } from "./request-context";
import { clientAddressResolver } from "./trusted-proxies";
import { errorHandler } from "./error-handler";
import { jsonBodyParser } from "./body";
import { rateLimitCheck } from "./rate-limit";
import { urlNulRefusal } from "./url-nul";
import { accessLog } from "./access-log";
import { LOCAL_OBJECTS_PATH } from "../modules/storage/local";
import { INVITE_ACCEPT_PER_MINUTE } from "../modules/seats/domain";
import { STRIPE_WEBHOOK_PER_MINUTE } from "../modules/payments/domain";

export const API_PREFIX = "/api/v1";

/**
 * The routes the lane serves (http/lane.ts): the SDK calls whose credential is the license key in
 * the body, made by every client app at every start (verify) or on every metered action (usage).
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

/** The listening server, once there is one (none when the app is driven in process). */
export interface ServerRef {
  current: Server<unknown> | null;
}

/** `area(name)`: a new area's app with the pipeline's hooks in place (add the area's routes to it). */
export type Pipeline = ReturnType<typeof createPipeline>;

// normalize: false — Elysia otherwise silently strips unknown body fields; our schemas say
// additionalProperties: false and mean it (unknown keys are a 400), and responses stay exact.
// encodeSchema: false — no response schema uses t.Transform, and Elysia otherwise walks every
// response through TypeBox's Encode (measured: ~6% of a verify request). Responses are still
// validated against their schemas.
// systemRouter: false — Keyward listens itself (server.ts) and Elysia's router finds every route
// but the lane's, as in app.handle (the tests' path).
const newArea = (name: string) => new Elysia({ name, normalize: false, encodeSchema: false, systemRouter: false });

export function createPipeline(deps: Deps) {
  const { config, clock, logger } = deps;
  const server: ServerRef = { current: null };
  const resolveClient = clientAddressResolver(config.trustProxy, NO_PEER);

  // Per-address limits, before any parsing (spec: Limits; DECISIONS: Abuse limits), in this order:
  // a request counts against every rule whose prefix its path has, and the first refusal answers.
  // The counters live in deps.rateLimiter, so every area counts against the same ones.
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

  const area = (name: string) =>
    newArea(name)
      // 1. Request id, client address and the rate limits: one hook, before anything can fail. The
      // server is read from the shared reference rather than destructured from the context: a hook
      // that destructures `server` makes Elysia define an accessor on every request's context object.
      // The path comes from the context when the router put it there (the lane and Elysia's static
      // routes do, which spares reading the request's URL), from the URL otherwise.
      .onRequest((context) => {
        const { request, set } = context;
        const ctx = beginRequest(request, clientIp(request, server.current, resolveClient), clock.monotonicMs());
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
      .use(errorHandler(logger));

  return { area, server };
}
