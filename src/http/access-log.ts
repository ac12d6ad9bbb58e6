// One structured line per request (method, path, status, duration, client address, request id).
import { Elysia } from "elysia";
import type { Logger } from "../shared/logger";
import type { Clock } from "../shared/clock";
import { pathOf, requestContext } from "./request-context";

export function accessLog(logger: Logger, clock: Clock) {
  const plugin = new Elysia({ name: "keyward/access-log" });
  // Not registered when info lines are dropped: Elysia schedules an afterResponse hook for every
  // request even when the hook would return at once (measurable on the verify hot path).
  if (!logger.enabled("info")) return plugin;
  return plugin.onAfterResponse({ as: "global" }, ({ request, set }) => {
    const ctx = requestContext(request);
    logger.info("request", {
      requestId: ctx.requestId,
      method: request.method,
      path: pathOf(request.url),
      status: ctx.status ?? set.status ?? 200,
      ms: Math.round((clock.monotonicMs() - ctx.startedAt) * 10) / 10,
      ip: ctx.ip,
    });
  });
}
