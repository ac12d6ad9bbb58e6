// Pure rules of outgoing webhooks: event filters, product scope, signatures and the disable threshold.
import { createHmac } from "node:crypto";
import { EVENT_TYPES } from "../outbox/events";
import type { WebhookEndpoint } from "./repo";

/**
 * After this many failed attempts in a row (any delivery of the endpoint; a success resets the
 * count) the endpoint is disabled and the admins are emailed. With the default backoff that is
 * roughly a day of a receiver failing everything.
 */
export const DISABLE_AFTER_CONSECUTIVE_FAILURES = 20;
/** How long the secret replaced by a rotation still signs (both v1 signatures are sent). */
export const ROTATION_OVERLAP_MS = 24 * 60 * 60 * 1000;
/** Most filters one endpoint may hold. */
export const MAX_FILTERS = 50;
/** The event sent by POST /admin/webhooks/{id}/test, to that endpoint only. */
export const TEST_EVENT_TYPE = "webhook.test";

const FILTER_SHAPE = /^(\*|[a-z_]+\.\*|[a-z_]+\.[a-z_]+)$/;
const knownPrefixes = () => new Set([...EVENT_TYPES, TEST_EVENT_TYPE].map((t) => t.slice(0, t.indexOf(".") + 1)));

/** Why a filter cannot be stored (null: fine): `*`, `prefix.*` of a known prefix, or a known type. */
export function filterProblem(filter: string): string | null {
  if (!FILTER_SHAPE.test(filter)) return `"${filter}" is not an event type, "prefix.*" or "*"`;
  if (filter === "*") return null;
  if (filter.endsWith(".*")) return knownPrefixes().has(filter.slice(0, -1)) ? null : `no event type starts with "${filter.slice(0, -1)}"`;
  return (EVENT_TYPES as readonly string[]).includes(filter) || filter === TEST_EVENT_TYPE ? null : `unknown event type "${filter}"`;
}

/** Whether one of `filters` selects `type`. */
export function matchesFilters(filters: readonly string[], type: string): boolean {
  return filters.some((f) => f === "*" || f === type || (f.endsWith(".*") && type.startsWith(f.slice(0, -1))));
}

/** The product an event belongs to: its data.product_id, or null. */
export function eventProductId(body: unknown): string | null {
  const data = body && typeof body === "object" ? (body as { data?: unknown }).data : null;
  const id = data && typeof data === "object" ? (data as { product_id?: unknown }).product_id : null;
  return typeof id === "string" ? id : null;
}

/** Whether an enabled endpoint receives an event: a matching filter, and its product when scoped. */
export function endpointWants(e: Pick<WebhookEndpoint, "enabled" | "events" | "productId">, type: string, productId: string | null): boolean {
  if (!e.enabled || !matchesFilters(e.events, type)) return false;
  return e.productId === null || e.productId === productId;
}

/** The bytes a Standard Webhooks signature covers: `${id}.${timestamp}.${body}`. */
export const signedContent = (id: string, timestampSeconds: number, body: string) => `${id}.${timestampSeconds}.${body}`;

/** The key bytes of a `whsec_…` secret (base64 after the prefix). */
export function secretKeyBytes(secret: string): Buffer {
  return Buffer.from(secret.startsWith("whsec_") ? secret.slice("whsec_".length) : secret, "base64");
}

/** `v1,<base64 HMAC-SHA256>` of the signed content under a `whsec_…` secret. */
export function v1Signature(secret: string, content: string): string {
  return `v1,${createHmac("sha256", secretKeyBytes(secret)).update(content, "utf8").digest("base64")}`;
}

/** Whether the previous secret still signs at `now` (the 24-hour overlap after a rotation). */
export function previousSecretLive(e: Pick<WebhookEndpoint, "previousSecretEncrypted" | "previousSecretExpiresAt">, now: Date): boolean {
  return e.previousSecretEncrypted !== null && e.previousSecretExpiresAt !== null && now.getTime() < e.previousSecretExpiresAt.getTime();
}
