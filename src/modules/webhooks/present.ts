// Domain → wire for the webhook admin routes: field by field, so no sealed secret ever leaves.
import type { OutboxMessage } from "../outbox/repo";
import { sortedKeys } from "../../shared/json";
import { eventProductId } from "./domain";
import type { WebhookDelivery, WebhookEndpoint } from "./repo";
import { presentPublicKey } from "./secrets";

const iso = (d: Date | null) => (d ? d.toISOString() : null);

export const presentEndpoint = (e: WebhookEndpoint, now: Date) => ({
  id: e.id,
  url: e.url,
  description: e.description,
  events: e.events,
  enabled: e.enabled,
  product_id: e.productId,
  ed25519_public_key: presentPublicKey(e.signingPublicKey),
  previous_secret_expires_at: e.previousSecretExpiresAt && e.previousSecretExpiresAt.getTime() > now.getTime() ? e.previousSecretExpiresAt.toISOString() : null,
  consecutive_failures: e.consecutiveFailures,
  disabled_reason: e.disabledReason,
  disabled_at: iso(e.disabledAt),
  created_at: e.createdAt.toISOString(),
  updated_at: e.updatedAt.toISOString(),
});

function parse(body: string): unknown {
  try {
    return JSON.parse(body);
  } catch {
    return body;
  }
}

export const presentDelivery = (d: WebhookDelivery) => ({
  id: d.id,
  endpoint_id: d.endpointId,
  event_id: d.eventId,
  event_type: d.eventType,
  payload: parse(d.body),
  status: d.status,
  attempts: d.attempts,
  next_attempt_at: d.status === "pending" ? d.nextAttemptAt.toISOString() : null,
  last_attempt_at: iso(d.lastAttemptAt),
  last_response_code: d.lastResponseCode,
  last_latency_ms: d.lastLatencyMs,
  last_response_body: d.lastResponseBody,
  last_error: d.lastError,
  created_at: d.createdAt.toISOString(),
  delivered_at: iso(d.deliveredAt),
});

export function presentEvent(m: OutboxMessage) {
  const p = (m.payload && typeof m.payload === "object" ? m.payload : {}) as Record<string, unknown>;
  return {
    id: m.id,
    type: m.topic,
    timestamp: typeof p.timestamp === "string" ? p.timestamp : m.createdAt.toISOString(),
    // jsonb (PostgreSQL) and JSON text (SQLite) keep keys in different orders: one order on the wire.
    data: sortedKeys(p.data ?? {}),
    product_id: eventProductId(m.payload),
    created_at: m.createdAt.toISOString(),
  };
}
