import { table, text, integer, index, uniqueIndex, primaryKey, ts, json, bool, byteOrder } from "../dialect/sqlite";
import { products } from "./catalog";

/**
 * Outgoing webhook endpoints (Standard Webhooks; docs/webhooks.md). The signing secret (`whsec_…`)
 * and the optional Ed25519 seed are sealed with AES-256-GCM (HKDF subkey webhookSecretEncryption,
 * the row id and field as additional data); the secret is shown once, at creation or rotation.
 */
export const webhookEndpoints = table(
  "webhook_endpoints",
  {
    id: text("id").primaryKey(),
    url: text("url").notNull(),
    description: text("description").notNull(),
    /** Event filters: exact types, `prefix.*` wildcards, or `*`. */
    events: json("events").$type<string[]>().notNull(),
    enabled: bool("enabled").notNull(),
    /** Only events of this product (null: every product, and events without one). */
    productId: text("product_id").references(() => products.id, { onDelete: "cascade" }),
    secretEncrypted: text("secret_encrypted").notNull(),
    /** The secret before the last rotation, still signed with until previous_secret_expires_at. */
    previousSecretEncrypted: text("previous_secret_encrypted"),
    previousSecretExpiresAt: ts("previous_secret_expires_at"),
    /** Sealed Ed25519 seed of the optional `v1a` signature; null: v1 only. */
    signingKeyEncrypted: text("signing_key_encrypted"),
    /** Raw 32-byte Ed25519 public key, base64. */
    signingPublicKey: text("signing_public_key"),
    consecutiveFailures: integer("consecutive_failures").notNull().default(0),
    /** Why it was disabled: "manual", "gone" (410), "failures"; null while enabled. */
    disabledReason: text("disabled_reason"),
    disabledAt: ts("disabled_at"),
    createdAt: ts("created_at").notNull(),
    updatedAt: ts("updated_at").notNull(),
  },
  (t) => [index("webhook_endpoints_product_idx").on(t.productId), index("webhook_endpoints_created_idx").on(t.createdAt)],
);

/**
 * One row per (event, endpoint): its id is the `webhook-id` header, the same on every attempt. The
 * body is stored as sent, so retries and redeliveries send the same bytes.
 */
export const webhookDeliveries = table(
  "webhook_deliveries",
  {
    id: text("id").primaryKey(),
    endpointId: text("endpoint_id")
      .notNull()
      .references(() => webhookEndpoints.id, { onDelete: "cascade" }),
    /** The outbox event message; null for a test event. */
    eventId: text("event_id"),
    eventType: text("event_type").notNull(),
    body: text("body").notNull(),
    status: text("status", { enum: ["pending", "delivered", "failed"] }).notNull(),
    attempts: integer("attempts").notNull().default(0),
    /** When it is due; while a node delivers it, the end of that node's claim. */
    nextAttemptAt: ts("next_attempt_at").notNull(),
    lastAttemptAt: ts("last_attempt_at"),
    lastResponseCode: integer("last_response_code"),
    lastLatencyMs: integer("last_latency_ms"),
    /** The first 2 KB of the last response body. */
    lastResponseBody: text("last_response_body"),
    lastError: text("last_error"),
    createdAt: ts("created_at").notNull(),
    deliveredAt: ts("delivered_at"),
  },
  (t) => [
    uniqueIndex("webhook_deliveries_event_endpoint_idx").on(t.eventId, t.endpointId),
    index("webhook_deliveries_due_idx").on(t.status, t.nextAttemptAt),
    // GET /admin/webhooks/:id/deliveries: an endpoint's deliveries newest first in (created_at, id),
    // unfiltered or by status or event type (docs/performance.md "Admin lists at scale").
    index("webhook_deliveries_endpoint_idx").on(t.endpointId, t.createdAt, byteOrder(t.id)),
    index("webhook_deliveries_endpoint_status_idx").on(t.endpointId, t.status, t.createdAt, byteOrder(t.id)),
    index("webhook_deliveries_endpoint_type_idx").on(t.endpointId, t.eventType, t.createdAt, byteOrder(t.id)),
    // The delivery worker: each enabled endpoint's earliest due pending delivery (its wake-up poll and
    // its per-endpoint claim window), one index seek per endpoint.
    index("webhook_deliveries_endpoint_due_idx").on(t.endpointId, t.status, t.nextAttemptAt, byteOrder(t.id)),
  ],
);
