// Per-IP rate limit on the public SDK and feed routes (DECISIONS: Abuse limits): 429 RATE_LIMITED with
// Retry-After. Checked in onRequest, before parsing, so a flood costs as little as possible.
import { Elysia } from "elysia";
import { RATE_LIMIT_WINDOW_MS, type RateDecision, type RateLimiter } from "../shared/rate-limiter";
import type { Clock } from "../shared/clock";
import { pathOf, requestContext } from "./request-context";
import { errorResponse } from "./error-handler";

/**
 * `bucket` names the counter (default "public"): limits with different buckets count separately per
 * IP (invite accept has its own 60/min, spec: Limits) and are separate plugins.
 */
export function publicRateLimit(opts: { limiter: RateLimiter; clock: Clock; perMinute: number; prefixes: readonly string[]; bucket?: string }) {
  const { limiter, clock, perMinute, prefixes } = opts;
  const bucket = opts.bucket ?? "public";
  const refuse = (request: Request, decision: RateDecision) =>
    decision.allowed
      ? undefined
      : errorResponse(request, "RATE_LIMITED", "Too many requests; retry later.", { retry_after: decision.retryAfterSeconds }, {
          "retry-after": String(decision.retryAfterSeconds),
        });
  // Not an async function: when the limiter decides without I/O (SQLite counts in memory), the hook
  // stays synchronous and every public request skips a promise in Elysia's hook chain.
  return new Elysia({ name: `keyward/rate-limit/${bucket}` }).onRequest(({ request }) => {
    if (perMinute === 0) return;
    const path = pathOf(request.url);
    if (!prefixes.some((p) => path.startsWith(p))) return;
    const { ip } = requestContext(request);
    const decision = limiter.hit(`${bucket}:${ip}`, perMinute, RATE_LIMIT_WINDOW_MS, clock.nowMs());
    return decision instanceof Promise ? decision.then((d) => refuse(request, d)) : refuse(request, decision);
  });
}
