// Public health routes, outside the rate-limited prefixes (http/pipeline.ts) so load balancers can probe freely.
import { Elysia } from "elysia";
import { t } from "../../http/schema";
import type { Deps } from "../../deps";
import { Envelope, errors, ok } from "../../http/envelope";
import { checkLiveness, checkReadiness } from "./service";

const Readiness = t.Object({
  status: t.Literal("ready"),
  database: t.Literal("ok"),
  storage: t.Union([t.Literal("ok"), t.Literal("not_configured")], {
    description: "`not_configured` with STORAGE_DRIVER=none (releases are off; not an outage)",
  }),
});

export function healthRoutes(deps: Deps) {
  return new Elysia({ name: "keyward/health" })
    .get(
      "/health",
      async () => {
        await checkLiveness(deps);
        return ok({ status: "ok" as const, database: "ok" as const });
      },
      {
        response: { 200: Envelope(t.Object({ status: t.Literal("ok"), database: t.Literal("ok") })), ...errors() },
        detail: { tags: ["System"], summary: "Liveness and database check (cheap; does not touch storage)" },
      },
    )
    .get(
      "/health/ready",
      async () => {
        const r = await checkReadiness(deps);
        return ok({ status: "ready" as const, database: "ok" as const, storage: r.storage as "ok" | "not_configured" });
      },
      {
        response: { 200: Envelope(Readiness), ...errors(503) },
        detail: {
          tags: ["System"],
          summary:
            "Readiness for load balancers: database and object storage (S3: one ListObjects call, 2 s timeout). 503 NOT_READY with details.failed naming the failed checks",
        },
      },
    );
}
