import { Elysia } from "elysia";
import { t } from "../../http/schema";
import type { Deps } from "../../deps";
import type { AdminGuard } from "../../http/auth";
import { Envelope, errors, ok } from "../../http/envelope";
import { licenseUsage, resetUsage } from "./service";
import { LicenseIdParams, ResetBody, UsageCounterSchema } from "./model";
import { presentCounter } from "./present";

const detail = (summary: string) => ({ tags: ["Admin: licenses"], summary });
const Items = Envelope(t.Object({ items: t.Array(UsageCounterSchema) }));

export function usageAdminRoutes(deps: Deps, guard: AdminGuard) {
  return new Elysia({ name: "keyward/usage/admin" })
    .use(guard)
    .get("/admin/licenses/:id/usage", async ({ actor, params }) => ok({ items: (await licenseUsage(deps, actor, params.id)).map(presentCounter) }), {
      scopes: ["licenses:write"],
      params: LicenseIdParams,
      response: { 200: Items, ...errors(401, 403, 404) },
      detail: detail("Quota counters of a license for the current period, one per quota feature"),
    })
    .post(
      "/admin/licenses/:id/usage/reset",
      async ({ actor, params, body }) => ok({ items: (await resetUsage(deps, actor, params.id, body.feature)).map(presentCounter) }),
      {
        scopes: ["licenses:write"],
        params: LicenseIdParams,
        // An empty body parses to {} (src/http/body.ts), so the schema need not be optional.
        body: ResetBody,
        response: { 200: Items, ...errors(401, 403, 404) },
        detail: detail("Reset current-period quota counters (all, or one feature); audited"),
      },
    );
}
