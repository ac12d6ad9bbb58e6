import { t } from "../../http/schema";
import type { ElysiaOpenAPIConfig } from "@elysiajs/openapi";
import { Uuid } from "../license-api/model";
import { Instant } from "../../http/common-schemas";
import type { DeliveryStatus, DisabledReason } from "./repo";
import { MAX_FILTERS } from "./domain";
import { EVENT_TYPES } from "../outbox/events";
import { eventBodySchema } from "../outbox/event-schemas";

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : never) : never;

export const DeliveryStatusSchema = t.Union([t.Literal("pending"), t.Literal("delivered"), t.Literal("failed")], {
  description: "pending (not yet delivered: due, retrying, or waiting while its endpoint is disabled), delivered (2xx), failed (given up)",
});
const DisabledReasonSchema = t.Union([t.Literal("manual"), t.Literal("gone"), t.Literal("failures"), t.Null()], {
  description: "Why it is disabled: manual (an admin), gone (the receiver answered 410), failures (too many failed attempts in a row); null while enabled",
});
const statusesMatch: Same<typeof DeliveryStatusSchema.static, DeliveryStatus> = true;
const reasonsMatch: Same<Exclude<typeof DisabledReasonSchema.static, null>, DisabledReason> = true;
void statusesMatch;
void reasonsMatch;

const Url = t.String({ minLength: 1, maxLength: 2048, description: "https:// URL the events are POSTed to (http:// outside production or with WEBHOOK_ALLOW_PRIVATE)" });
const Filters = t.Array(t.String({ minLength: 1, maxLength: 100 }), {
  minItems: 1,
  maxItems: MAX_FILTERS,
  description: 'Event filters: exact types ("license.revoked"), prefixes ("license.*"), or "*" for every event',
});
const Description = t.String({ maxLength: 500 });

export const EndpointIdParams = t.Object({ id: Uuid });

export const CreateEndpointBody = t.Object(
  {
    url: Url,
    events: Filters,
    description: t.Optional(Description),
    enabled: t.Optional(t.Boolean({ description: "Default true" })),
    product_id: t.Optional(t.Union([Uuid, t.Null()], { description: "Only this product's events; omitted or null: every event (system-wide, unbound keys only)" })),
    ed25519: t.Optional(t.Boolean({ description: "Also sign with an Ed25519 key (a v1a signature beside v1); default false" })),
  },
  { additionalProperties: false },
);

export const UpdateEndpointBody = t.Object(
  {
    url: t.Optional(Url),
    events: t.Optional(Filters),
    description: t.Optional(Description),
    product_id: t.Optional(t.Union([Uuid, t.Null()])),
    ed25519: t.Optional(t.Boolean({ description: "true: sign with a new Ed25519 key (replacing any); false: stop sending v1a" })),
  },
  { additionalProperties: false, minProperties: 1, description: "Use /enable, /disable and /rotate-secret for those changes" },
);

export const EndpointListQuery = t.Object({
  product_id: t.Optional(Uuid),
  cursor: t.Optional(t.String({ maxLength: 512 })),
  limit: t.Optional(t.QueryInteger({ minimum: 1, maximum: 200 })),
});

export const EndpointSchema = t.Object(
  {
    id: Uuid,
    url: t.String(),
    description: t.String(),
    events: t.Array(t.String()),
    enabled: t.Boolean(),
    product_id: t.Union([Uuid, t.Null()]),
    ed25519_public_key: t.Union([t.String(), t.Null()], { description: "whpk_ + base64 of the raw 32-byte Ed25519 public key that verifies v1a signatures; null without v1a" }),
    previous_secret_expires_at: t.Union([t.String({ format: "date-time" }), t.Null()], { description: "Until when the secret replaced by the last rotation still signs" }),
    consecutive_failures: t.Integer({ description: "Failed attempts in a row (reset by a success or by enabling)" }),
    disabled_reason: DisabledReasonSchema,
    disabled_at: t.Union([t.String({ format: "date-time" }), t.Null()]),
    created_at: t.String({ format: "date-time" }),
    updated_at: t.String({ format: "date-time" }),
  },
  { title: "WebhookEndpoint" },
);

export const EndpointWithSecretSchema = t.Composite([EndpointSchema, t.Object({ secret: t.String({ description: "The whsec_ signing secret. Shown once: store it now" }) })], {
  title: "WebhookEndpointWithSecret",
});

export const DeliveryListQuery = t.Object({
  status: t.Optional(DeliveryStatusSchema),
  event_type: t.Optional(t.String({ minLength: 1, maxLength: 100 })),
  cursor: t.Optional(t.String({ maxLength: 512 })),
  limit: t.Optional(t.QueryInteger({ minimum: 1, maximum: 200 })),
});

export const DeliverySchema = t.Object(
  {
    id: Uuid,
    endpoint_id: Uuid,
    event_id: t.Union([Uuid, t.Null()], { description: "The event (GET /admin/events); null for a test event" }),
    event_type: t.String(),
    payload: t.Unknown({ description: "The body sent: {type, timestamp, data}" }),
    status: DeliveryStatusSchema,
    attempts: t.Integer({ description: "Attempts made so far" }),
    next_attempt_at: t.Union([t.String({ format: "date-time" }), t.Null()], { description: "When a pending delivery is due next; null otherwise" }),
    last_attempt_at: t.Union([t.String({ format: "date-time" }), t.Null()]),
    last_response_code: t.Union([t.Integer(), t.Null()], { description: "HTTP status of the last answer; null when none came" }),
    last_latency_ms: t.Union([t.Integer(), t.Null()], { description: "Milliseconds from sending to the answer's status line" }),
    last_response_body: t.Union([t.String(), t.Null()], { description: "The first 2 KB of the last answer" }),
    last_error: t.Union([t.String(), t.Null()]),
    created_at: t.String({ format: "date-time" }),
    delivered_at: t.Union([t.String({ format: "date-time" }), t.Null()]),
  },
  { title: "WebhookDelivery" },
);

export const DeliveryIdParams = t.Object({ id: Uuid });

export const EventListQuery = t.Object({
  type: t.Optional(t.String({ minLength: 1, maxLength: 100, pattern: "^(\\*|[a-z_]+\\.\\*|[a-z_]+\\.[a-z_]+)$", description: 'An exact type ("license.revoked") or a prefix ("license.*")' })),
  since: t.Optional(t.String({ format: "date-time", pattern: Instant.pattern, description: "Recorded at or after (RFC 3339)" })),
  until: t.Optional(t.String({ format: "date-time", pattern: Instant.pattern, description: "Recorded before (RFC 3339)" })),
  product_id: t.Optional(Uuid),
  cursor: t.Optional(t.String({ maxLength: 512 })),
  limit: t.Optional(t.QueryInteger({ minimum: 1, maximum: 200 })),
});

export const EventSchema = t.Object(
  {
    id: Uuid,
    type: t.String(),
    timestamp: t.String({ format: "date-time", description: "When the change happened" }),
    data: t.Unknown({ description: "The event's fields (docs/events.md)" }),
    product_id: t.Union([t.String(), t.Null()], { description: "data.product_id, when the event belongs to a product" }),
    created_at: t.String({ format: "date-time" }),
  },
  { title: "Event" },
);

/**
 * The OpenAPI 3.1 `webhooks` section: one entry per event type, whose request body is what an
 * endpoint receives (`{type, timestamp, data}`, signed per Standard Webhooks; see docs/webhooks.md).
 */
type OpenApiWebhooks = NonNullable<Extract<NonNullable<ElysiaOpenAPIConfig["documentation"]>, { webhooks?: unknown }>["webhooks"]>;

export function eventWebhooksDocument(): OpenApiWebhooks {
  return Object.fromEntries(
    EVENT_TYPES.map((type) => [
      type,
      {
        post: {
          operationId: `event_${type.replace(/[^A-Za-z0-9]+/g, "_")}`,
          summary: `Event ${type}`,
          description:
            "Sent to each enabled endpoint whose filter matches. Headers: webhook-id (stable across retries), webhook-timestamp, webhook-signature (v1 HMAC-SHA256, and v1a Ed25519 when configured). Answer 2xx to acknowledge; 410 disables the endpoint; anything else is retried with backoff.",
          tags: ["Webhook events"],
          // Authenticated by its signature headers, not by an OpenAPI security scheme.
          security: [],
          requestBody: { required: true, content: { "application/json": { schema: eventBodySchema(type) } } },
          responses: { "200": { description: "Delivered (any 2xx)" }, "410": { description: "Gone: Keyward disables the endpoint" } },
        },
      },
    ]),
  ) as unknown as OpenApiWebhooks; // TypeBox schemas are JSON Schema objects; the OpenAPI types do not know TypeBox
}
