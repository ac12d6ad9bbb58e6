import { Elysia } from "elysia";
import { t } from "../../http/schema";
import type { Deps } from "../../deps";
import type { AdminGuard } from "../../http/auth";
import { Envelope, errors, ok } from "../../http/envelope";
import { toInstant } from "../../http/common-schemas";
import { assertSystemWide } from "../../shared/actor";
import { AuditListQuery, AuditSchema } from "./model";
import { presentAudit } from "./present";

export function auditAdminRoutes(deps: Deps, guard: AdminGuard) {
  return new Elysia({ name: "keyward/audit/admin" }).use(guard).get(
    "/admin/audit",
    async ({ actor, query }) => {
      assertSystemWide(actor);
      const page = await deps.repos.audit.list({
        entityType: query.entity_type,
        entityId: query.entity_id,
        action: query.action,
        actorId: query.actor_id,
        productId: query.product_id,
        since: toInstant("since", query.since),
        until: toInstant("until", query.until),
        cursor: query.cursor,
        limit: query.limit ?? 50,
      });
      return ok({ items: page.items.map(presentAudit), next_cursor: page.nextCursor });
    },
    {
      scopes: ["admin"],
      query: AuditListQuery,
      response: {
        200: Envelope(t.Object({ items: t.Array(AuditSchema), next_cursor: t.Union([t.String(), t.Null()]) })),
        ...errors(401, 403),
      },
      detail: { tags: ["Admin: audit"], summary: "Audit log of admin mutations, newest first" },
    },
  );
}
