import { Elysia } from "elysia";
import { t } from "../../http/schema";
import type { Deps } from "../../deps";
import type { AdminGuard } from "../../http/auth";
import { Envelope, errors, ok } from "../../http/envelope";
import { Instant, toInstant } from "../../http/common-schemas";
import { assertSystemWide } from "../../shared/actor";
import type { AuditRecord } from "./repo";
import { sortedKeys } from "../../shared/json";

const AuditSchema = t.Object(
  {
    id: t.String(),
    actor_type: t.String(),
    actor_id: t.Union([t.String(), t.Null()]),
    action: t.String(),
    entity_type: t.String(),
    entity_id: t.Union([t.String(), t.Null()]),
    product_id: t.Union([t.String(), t.Null()]),
    changes: t.Unknown(),
    ip: t.Union([t.String(), t.Null()]),
    request_id: t.Union([t.String(), t.Null()]),
    created_at: t.String({ format: "date-time" }),
  },
  { title: "AuditEntry" },
);

const present = (r: AuditRecord) => ({
  id: r.id,
  actor_type: r.actorType,
  actor_id: r.actorId,
  action: r.action,
  entity_type: r.entityType,
  entity_id: r.entityId,
  product_id: r.productId,
  // jsonb (PostgreSQL) and JSON text (SQLite) keep keys in different orders: one order on the wire.
  changes: sortedKeys(r.changes),
  ip: r.ip,
  request_id: r.requestId,
  created_at: r.createdAt.toISOString(),
});

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
      return ok({ items: page.items.map(present), next_cursor: page.nextCursor });
    },
    {
      scopes: ["admin"],
      query: t.Object({
        entity_type: t.Optional(t.String({ maxLength: 64 })),
        entity_id: t.Optional(t.String({ maxLength: 64 })),
        action: t.Optional(t.String({ maxLength: 64 })),
        actor_id: t.Optional(t.String({ maxLength: 64 })),
        product_id: t.Optional(t.String({ format: "uuid" })),
        since: t.Optional(Instant),
        until: t.Optional(Instant),
        cursor: t.Optional(t.String({ maxLength: 512 })),
        limit: t.Optional(t.QueryInteger({ minimum: 1, maximum: 200 })),
      }),
      response: {
        200: Envelope(t.Object({ items: t.Array(AuditSchema), next_cursor: t.Union([t.String(), t.Null()]) })),
        ...errors(401, 403),
      },
      detail: { tags: ["Admin: audit"], summary: "Audit log of admin mutations, newest first" },
    },
  );
}
