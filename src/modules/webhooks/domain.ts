// Pure rules of outgoing webhooks: event filters, product scope, signatures and the disable threshold.
import { createHmac } from "node:crypto";
import { EVENT_TYPES } from "../outbox/events";
import type { AttemptOutcome, DisabledReason, EndpointHealth, EndpointHealthChanges, WebhookEndpoint } from "./repo";

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

/** A due delivery the claim may take: one row of an endpoint's claim window. */
export interface DueDelivery {
  id: string;
  endpointId: string;
  nextAttemptAt: Date;
}

/** What a claim may take (docs/webhooks.md#retries: WEBHOOK_CONCURRENCY, WEBHOOK_ENDPOINT_CONCURRENCY). */
export interface ClaimRoom {
  /** Most deliveries this claim takes in all. */
  limit: number;
  /** Most requests in flight to one endpoint on this node, counting `inFlight`. */
  perEndpoint: number;
  /** Requests this node has in flight per endpoint id now. */
  inFlight?: ReadonlyMap<string, number>;
}

/**
 * The deliveries a claim takes out of `candidates` (each endpoint's due deliveries, oldest due first):
 * oldest due first across endpoints, at most `limit`, and never past an endpoint's free room. A slow
 * endpoint's backlog thus never takes the slots another endpoint's deliveries need.
 */
export function pickDeliveries(candidates: readonly DueDelivery[], room: ClaimRoom): string[] {
  const sorted = [...candidates].sort((a, b) => a.nextAttemptAt.getTime() - b.nextAttemptAt.getTime() || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const taken = new Map<string, number>();
  const out: string[] = [];
  for (const c of sorted) {
    if (out.length >= room.limit) break;
    const busy = (room.inFlight?.get(c.endpointId) ?? 0) + (taken.get(c.endpointId) ?? 0);
    if (busy >= room.perEndpoint) continue;
    taken.set(c.endpointId, (taken.get(c.endpointId) ?? 0) + 1);
    out.push(c.id);
  }
  return out;
}

/**
 * How many due deliveries of each endpoint a claim reads (one window for every endpoint, in one
 * statement): what it may take from an endpoint with nothing in flight, never more than its limit.
 * An endpoint's requests in flight are counted when picking (pickDeliveries), not here.
 */
export function claimWindow(room: ClaimRoom): number {
  return Math.max(1, Math.min(room.limit, room.perEndpoint));
}

/**
 * What a failed attempt does to its endpoint, whose health was read under lock in the attempt's unit
 * of work: one more failure in a row; a 410 ("gone"), or the count reaching `threshold`, disables it,
 * unless it is disabled already (then the failure is only counted). So of failures settled at once
 * (on any node) exactly one disables the endpoint, and only that one writes the admins' emails.
 */
export function afterFailedAttempt(
  endpoint: EndpointHealth,
  outcome: Pick<AttemptOutcome, "at" | "disable">,
  threshold: number,
): { changes: EndpointHealthChanges; disabled: DisabledReason | null } {
  const consecutiveFailures = endpoint.consecutiveFailures + 1;
  const reason: DisabledReason | null = outcome.disable === "gone" ? "gone" : consecutiveFailures >= threshold ? "failures" : null;
  if (!reason || !endpoint.enabled) return { changes: { consecutiveFailures }, disabled: null };
  return { changes: { consecutiveFailures, enabled: false, disabledReason: reason, disabledAt: outcome.at, updatedAt: outcome.at }, disabled: reason };
}
