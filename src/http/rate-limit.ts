// Per-IP rate limits before any parsing (DECISIONS: Abuse limits): 429 RATE_LIMITED with Retry-After.
// One table of rules, decided in one pass by the pipeline's request hook (pipeline.ts), so a flood costs as
// little as possible and every route pays one path check, not one hook per limit.
import { RATE_LIMIT_WINDOW_MS, type RateDecision, type RateLimiter } from "../shared/rate-limiter";
import type { Clock } from "../shared/clock";
import { errorResponse } from "./error-handler";

export interface RateLimitRule {
  /** The counter's name: rules with different buckets count separately per address. */
  bucket: string;
  /** Requests per minute per address; 0 turns the rule off. */
  perMinute: number;
  /** Paths the rule covers (a path may fall under several rules; each counts it). */
  prefixes: readonly string[];
}

/** The answer to a request: undefined to go on, or the 429 (a promise of either with an async limiter). */
export type RateLimitCheck = (request: Request, path: string, ip: string) => Response | undefined | Promise<Response | undefined>;

/**
 * Checks `rules` in order against a request's path; each rule that covers it counts the request,
 * and the first refusal answers (later rules do not count a refused request). The decision stays
 * synchronous when the limiter decides without I/O (SQLite counts in memory), so most requests never
 * create a promise here.
 */
export function rateLimitCheck(limiter: RateLimiter, clock: Clock, rules: readonly RateLimitRule[]): RateLimitCheck {
  const active = rules.filter((r) => r.perMinute > 0);
  const refuse = (request: Request, decision: RateDecision) =>
    decision.allowed
      ? undefined
      : errorResponse(request, "RATE_LIMITED", "Too many requests; retry later.", { retry_after: decision.retryAfterSeconds }, {
          "retry-after": String(decision.retryAfterSeconds),
        });
  const check = (request: Request, path: string, ip: string, from: number): Response | undefined | Promise<Response | undefined> => {
    for (let i = from; i < active.length; i++) {
      const rule = active[i]!;
      if (!rule.prefixes.some((p) => path.startsWith(p))) continue;
      const decision = limiter.hit(`${rule.bucket}:${ip}`, rule.perMinute, RATE_LIMIT_WINDOW_MS, clock.nowMs());
      if (decision instanceof Promise) return decision.then((d) => refuse(request, d) ?? check(request, path, ip, i + 1));
      const refusal = refuse(request, decision);
      if (refusal) return refusal;
    }
    return undefined;
  };
  return (request, path, ip) => check(request, path, ip, 0);
}
