// The audit route's schemas: one entry of the log, and the list's filters.
import { t } from "../../http/schema";
import { Instant } from "../../http/common-schemas";

export const AuditSchema = t.Object(
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

export const AuditListQuery = t.Object({
  entity_type: t.Optional(t.String({ maxLength: 64 })),
  entity_id: t.Optional(t.String({ maxLength: 64 })),
  action: t.Optional(t.String({ maxLength: 64 })),
  actor_id: t.Optional(t.String({ maxLength: 64 })),
  product_id: t.Optional(t.String({ format: "uuid" })),
  since: t.Optional(Instant),
  until: t.Optional(Instant),
  cursor: t.Optional(t.String({ maxLength: 512 })),
  limit: t.Optional(t.QueryInteger({ minimum: 1, maximum: 200 })),
});
