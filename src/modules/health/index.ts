import { Elysia, t } from "elysia";
import type { Deps } from "../../deps";
import { Envelope, errors, ok } from "../../http/envelope";
import { AppError } from "../../shared/errors";

export function healthRoutes(deps: Deps) {
  return new Elysia({ name: "keyward/health" }).get(
    "/health",
    () => {
      try {
        deps.db.ping();
      } catch (e) {
        deps.logger.error("health check: database unavailable", { error: e });
        throw new AppError("INTERNAL_ERROR", { message: "Database unavailable." });
      }
      return ok({ status: "ok" as const, database: "ok" as const });
    },
    {
      response: { 200: Envelope(t.Object({ status: t.Literal("ok"), database: t.Literal("ok") })), ...errors() },
      detail: { tags: ["System"], summary: "Liveness and database check" },
    },
  );
}
