// The outbox handler of kind `event`: fans an event out into one pending delivery per enabled
// endpoint that wants it (a matching filter; its product when the endpoint is scoped to one), in
// one statement. The delivery worker (jobs/delivery-worker.ts; deliver.ts's pool) then sends them. Handing the same event over
// twice (the outbox delivers at least once) adds nothing: one delivery per (event, endpoint).
import type { Deps } from "../../deps";
import { newId } from "../../shared/ids";
import { sortedKeys } from "../../shared/json";
import { EVENT_SCHEMAS } from "../outbox/event-schemas";
import type { OutboxHandler } from "../outbox/handlers";
import type { OutboxMessage } from "../outbox/repo";
import { endpointWants, eventProductId } from "./domain";
import type { WebhookDelivery } from "./repo";

/**
 * The Standard Webhooks body of an event message, keys in the documented order: `{type, timestamp,
 * data}`, and `data`'s keys in the order of the event's schema (outbox/event-schemas.ts, the OpenAPI
 * document's `webhooks`). The payload comes back from the outbox column, and PostgreSQL's jsonb
 * returns an object's keys in its own order (shorter keys first): without this a receiver got
 * differently ordered bodies from the two engines.
 */
export function eventBody(m: Pick<OutboxMessage, "topic" | "payload" | "createdAt">): string {
  const p = (m.payload && typeof m.payload === "object" ? m.payload : {}) as Record<string, unknown>;
  const type = typeof p.type === "string" ? p.type : m.topic;
  return JSON.stringify({
    type,
    timestamp: typeof p.timestamp === "string" ? p.timestamp : m.createdAt.toISOString(),
    data: inDocumentedOrder(type, p.data ?? {}),
  });
}

const SCHEMA_KEYS: ReadonlyMap<string, readonly string[]> = new Map(
  Object.entries(EVENT_SCHEMAS).map(([type, schema]) => [type, Object.keys(schema.properties)]),
);

/** An event's data with its schema's keys first, in schema order, then any other key in byte order (nested values too). */
function inDocumentedOrder(type: string, data: unknown): unknown {
  if (data === null || typeof data !== "object" || Array.isArray(data)) return sortedKeys(data);
  const fields = data as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const key of SCHEMA_KEYS.get(type) ?? []) if (key in fields) out[key] = sortedKeys(fields[key]);
  for (const [key, value] of Object.entries(sortedKeys(fields) as Record<string, unknown>)) if (!(key in out)) out[key] = value;
  return out;
}

/** A new pending delivery, due at `at`. */
export function newDelivery(input: { endpointId: string; eventId: string | null; eventType: string; body: string; at: Date }): WebhookDelivery {
  return {
    id: newId(),
    endpointId: input.endpointId,
    eventId: input.eventId,
    eventType: input.eventType,
    body: input.body,
    status: "pending",
    attempts: 0,
    nextAttemptAt: input.at,
    lastAttemptAt: null,
    lastResponseCode: null,
    lastLatencyMs: null,
    lastResponseBody: null,
    lastError: null,
    createdAt: input.at,
    deliveredAt: null,
  };
}

export function createWebhookFanOut(deps: Pick<Deps, "repos" | "clock">): OutboxHandler {
  return async (m) => {
    const productId = eventProductId(m.payload);
    const endpoints = (await deps.repos.webhooks.listEnabledEndpoints()).filter((e) => endpointWants(e, m.topic, productId));
    if (endpoints.length === 0) return;
    const body = eventBody(m);
    const at = deps.clock.now();
    const added = await deps.repos.webhooks.addDeliveries(endpoints.map((e) => newDelivery({ endpointId: e.id, eventId: m.id, eventType: m.topic, body, at })));
    // Wakes the delivery workers, which send them at once (outbox/bell.ts, NOTIFY on PostgreSQL).
    if (added > 0) await deps.repos.outbox.wakeDeliveryWork();
  };
}
