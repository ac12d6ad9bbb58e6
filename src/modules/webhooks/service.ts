// Admin verbs over webhook endpoints, their deliveries and the event log. Product binding
// (docs/security.md): an endpoint scoped to a product belongs to that product (a key bound to it may
// manage it); an endpoint with no product receives every product's events and is system-wide
// (refused to every bound key). Every change is audited in its own transaction.
import type { Deps } from "../../deps";
import { AppError, validationError } from "../../shared/errors";
import { newId } from "../../shared/ids";
import { assertProductAccess, assertSystemWide, scopedProductFilter, type Actor } from "../../shared/actor";
import type { Effects } from "../outbox/effects";
import type { OutboxMessage } from "../outbox/repo";
import { filterProblem, MAX_FILTERS, ROTATION_OVERLAP_MS, TEST_EVENT_TYPE } from "./domain";
import { newDelivery } from "./handler";
import type { DeliveryStatus, EndpointChanges, Page, WebhookDelivery, WebhookEndpoint } from "./repo";
import { newSigningKey, newWebhookSecret, sealSecret } from "./secrets";
import { resolveTarget, UnsafeTargetError } from "./ssrf";

export const MAX_URL_LENGTH = 2048;

/** Who may see or change an endpoint: its product's keys, or unbound ones; unscoped endpoints are system-wide. */
export function assertEndpointAccess(actor: Actor, e: Pick<WebhookEndpoint, "productId">): void {
  if (e.productId === null) assertSystemWide(actor);
  else assertProductAccess(actor, e.productId);
}

const audit = (deps: Deps, actor: Actor, action: string, e: Pick<WebhookEndpoint, "id" | "productId">, changes: Record<string, unknown> | null): Effects => ({
  audit: { actor, action, entityType: "webhook_endpoint", entityId: e.id, productId: e.productId, changes, at: deps.clock.now() },
});

/**
 * Checks a target URL: http(s) only, no user name or password, no http:// in production, and
 * (unless WEBHOOK_ALLOW_PRIVATE) neither a refused literal address nor a host name resolving to one.
 */
export async function checkWebhookUrl(deps: Pick<Deps, "config" | "resolveHost">, raw: string): Promise<string> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw validationError({ url: "not an absolute URL" });
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") throw validationError({ url: "must be an https:// (or http://) URL" });
  if (url.username !== "" || url.password !== "") throw validationError({ url: "must not carry a user name or password" });
  if (url.hash !== "") throw validationError({ url: "must not have a #fragment" });
  const allowPrivate = deps.config.webhookAllowPrivate;
  if (url.protocol === "http:" && deps.config.nodeEnv === "production" && !allowPrivate) {
    throw validationError({ url: "must be https:// in production (WEBHOOK_ALLOW_PRIVATE=true allows http://)" });
  }
  try {
    await resolveTarget(url, { allowPrivate, resolve: deps.resolveHost });
  } catch (e) {
    if (e instanceof UnsafeTargetError) throw validationError({ url: `refused: ${e.message} (WEBHOOK_ALLOW_PRIVATE=true allows internal targets)` });
    throw e;
  }
  return url.toString();
}

function checkFilters(events: string[]): string[] {
  const unique = [...new Set(events)];
  if (unique.length === 0) throw validationError({ events: "at least one filter (an event type, \"prefix.*\" or \"*\")" });
  if (unique.length > MAX_FILTERS) throw validationError({ events: `at most ${MAX_FILTERS} filters` });
  for (const f of unique) {
    const problem = filterProblem(f);
    if (problem) throw validationError({ events: problem });
  }
  return unique;
}

async function checkProduct(deps: Deps, actor: Actor, productId: string | null): Promise<void> {
  if (productId === null) {
    assertSystemWide(actor);
    return;
  }
  assertProductAccess(actor, productId);
  if (!(await deps.repos.products.findById(productId))) throw validationError({ product_id: "unknown product" });
}

async function loadEndpoint(deps: Deps, actor: Actor, id: string): Promise<WebhookEndpoint> {
  const e = await deps.repos.webhooks.getEndpoint(id);
  if (!e) throw new AppError("NOT_FOUND", { message: "Webhook endpoint not found." });
  assertEndpointAccess(actor, e);
  return e;
}

export interface CreateEndpointInput {
  url: string;
  description: string;
  events: string[];
  enabled: boolean;
  productId: string | null;
  /** Also sign with Ed25519 (`v1a`). */
  ed25519: boolean;
}

/** Creates an endpoint; the `whsec_…` secret is returned here and never again. */
export async function createEndpoint(deps: Deps, actor: Actor, input: CreateEndpointInput): Promise<{ endpoint: WebhookEndpoint; secret: string }> {
  await checkProduct(deps, actor, input.productId);
  const events = checkFilters(input.events);
  const url = await checkWebhookUrl(deps, input.url);
  const now = deps.clock.now();
  const id = newId();
  const secret = newWebhookSecret();
  const key = input.ed25519 ? newSigningKey(deps.secrets, id) : null;
  const endpoint: WebhookEndpoint = {
    id,
    url,
    description: input.description,
    events,
    enabled: input.enabled,
    productId: input.productId,
    secretEncrypted: sealSecret(deps.secrets, id, secret),
    previousSecretEncrypted: null,
    previousSecretExpiresAt: null,
    signingKeyEncrypted: key?.sealed ?? null,
    signingPublicKey: key?.publicKey ?? null,
    consecutiveFailures: 0,
    disabledReason: input.enabled ? null : "manual",
    disabledAt: input.enabled ? null : now,
    createdAt: now,
    updatedAt: now,
  };
  const changes = { url, description: input.description, events, enabled: input.enabled, product_id: input.productId, ed25519: input.ed25519 };
  const created = await deps.db.transaction(async ({ repos }) => {
    const row = await repos.webhooks.createEndpoint(endpoint);
    await repos.outbox.writeEffects(audit(deps, actor, "webhook.create", endpoint, changes));
    return row;
  });
  return { endpoint: created, secret };
}

export async function listEndpoints(deps: Deps, actor: Actor, filter: { productId?: string; cursor?: string; limit: number }): Promise<Page<WebhookEndpoint>> {
  const productId = scopedProductFilter(actor, filter.productId);
  return await deps.repos.webhooks.listEndpoints({ productId, cursor: filter.cursor, limit: filter.limit });
}

export const getEndpoint = loadEndpoint;

export interface UpdateEndpointInput {
  url?: string;
  description?: string;
  events?: string[];
  productId?: string | null;
  /** true: add an Ed25519 key (a new one if it had one); false: remove it. */
  ed25519?: boolean;
}

/** An endpoint change and its audit row in one unit of work; null when the endpoint is gone. */
async function updateAudited(deps: Deps, id: string, changes: EndpointChanges, effects: Effects): Promise<WebhookEndpoint | null> {
  return await deps.db.transaction(async ({ repos }) => {
    const row = await repos.webhooks.updateEndpoint(id, changes);
    if (row) await repos.outbox.writeEffects(effects);
    return row;
  });
}

export async function updateEndpoint(deps: Deps, actor: Actor, id: string, input: UpdateEndpointInput): Promise<WebhookEndpoint> {
  const current = await loadEndpoint(deps, actor, id);
  const now = deps.clock.now();
  const changes: EndpointChanges = { updatedAt: now };
  const logged: Record<string, unknown> = {};
  if (input.productId !== undefined && input.productId !== current.productId) {
    await checkProduct(deps, actor, input.productId);
    changes.productId = logged.product_id = input.productId;
  }
  if (input.events !== undefined) changes.events = logged.events = checkFilters(input.events);
  if (input.url !== undefined) changes.url = logged.url = await checkWebhookUrl(deps, input.url);
  if (input.description !== undefined) changes.description = logged.description = input.description;
  if (input.ed25519 === true) {
    const key = newSigningKey(deps.secrets, id);
    changes.signingKeyEncrypted = key.sealed;
    changes.signingPublicKey = key.publicKey;
    logged.ed25519 = "new key";
  } else if (input.ed25519 === false && current.signingKeyEncrypted !== null) {
    changes.signingKeyEncrypted = null;
    changes.signingPublicKey = null;
    logged.ed25519 = "removed";
  }
  const updated = await updateAudited(deps, id, changes, audit(deps, actor, "webhook.update", current, logged));
  if (!updated) throw new AppError("NOT_FOUND", { message: "Webhook endpoint not found." });
  return updated;
}

export async function deleteEndpoint(deps: Deps, actor: Actor, id: string): Promise<void> {
  const current = await loadEndpoint(deps, actor, id);
  const deleted = await deps.db.transaction(async ({ repos }) => {
    const gone = await repos.webhooks.deleteEndpoint(id);
    if (gone) await repos.outbox.writeEffects(audit(deps, actor, "webhook.delete", current, { url: current.url }));
    return gone;
  });
  if (!deleted) {
    throw new AppError("NOT_FOUND", { message: "Webhook endpoint not found." });
  }
}

/** Enables (clearing the failure count) or disables (reason manual) an endpoint. */
export async function setEndpointEnabled(deps: Deps, actor: Actor, id: string, enabled: boolean): Promise<WebhookEndpoint> {
  const current = await loadEndpoint(deps, actor, id);
  const now = deps.clock.now();
  const changes: EndpointChanges = enabled
    ? { enabled: true, consecutiveFailures: 0, disabledReason: null, disabledAt: null, updatedAt: now }
    : { enabled: false, disabledReason: "manual", disabledAt: now, updatedAt: now };
  const updated = await updateAudited(deps, id, changes, audit(deps, actor, enabled ? "webhook.enable" : "webhook.disable", current, null));
  if (!updated) throw new AppError("NOT_FOUND", { message: "Webhook endpoint not found." });
  // Deliveries that waited while it was disabled are due again, though nothing was written: wake this
  // node's delivery worker (the others find them at their next poll, within a second).
  if (enabled) deps.outboxNudge.nudge();
  return updated;
}

/**
 * A new secret, returned once; the old one keeps signing (a second v1 signature) for 24 hours so
 * receivers can switch over. A secret replaced earlier and still in its overlap is dropped.
 */
export async function rotateSecret(deps: Deps, actor: Actor, id: string): Promise<{ endpoint: WebhookEndpoint; secret: string }> {
  const current = await loadEndpoint(deps, actor, id);
  const now = deps.clock.now();
  const secret = newWebhookSecret();
  const expires = new Date(now.getTime() + ROTATION_OVERLAP_MS);
  const changes: EndpointChanges = {
    secretEncrypted: sealSecret(deps.secrets, id, secret),
    previousSecretEncrypted: current.secretEncrypted,
    previousSecretExpiresAt: expires,
    updatedAt: now,
  };
  const updated = await updateAudited(deps, id, changes, audit(deps, actor, "webhook.rotate_secret", current, { previous_secret_expires_at: expires.toISOString() }));
  if (!updated) throw new AppError("NOT_FOUND", { message: "Webhook endpoint not found." });
  return { endpoint: updated, secret };
}

/** Queues a `webhook.test` event for this endpoint only (whatever its filters); delivered by the next pass. */
export async function sendTestEvent(deps: Deps, actor: Actor, id: string): Promise<WebhookDelivery> {
  const e = await loadEndpoint(deps, actor, id);
  if (!e.enabled) throw new AppError("WEBHOOK_DISABLED");
  const at = deps.clock.now();
  const body = JSON.stringify({ type: TEST_EVENT_TYPE, timestamp: at.toISOString(), data: { endpoint_id: e.id, product_id: e.productId, message: "A test event sent from Keyward." } });
  const delivery = newDelivery({ endpointId: e.id, eventId: null, eventType: TEST_EVENT_TYPE, body, at });
  await deps.db.transaction(async ({ repos }) => {
    await repos.webhooks.addDeliveries([delivery]);
    await repos.outbox.writeEffects(audit(deps, actor, "webhook.test", e, { delivery_id: delivery.id }));
    // Wakes the delivery workers at the commit (outbox/bell.ts, NOTIFY on PostgreSQL).
    await repos.outbox.wakeDeliveryWork();
  });
  return delivery;
}

export async function listDeliveries(
  deps: Deps,
  actor: Actor,
  endpointId: string,
  filter: { status?: DeliveryStatus; eventType?: string; cursor?: string; limit: number },
): Promise<Page<WebhookDelivery>> {
  await loadEndpoint(deps, actor, endpointId);
  return await deps.repos.webhooks.listDeliveries({ endpointId, ...filter });
}

/** Sends a delivery again (same webhook-id, new attempt), whatever its status; due at once. */
export async function redeliver(deps: Deps, actor: Actor, deliveryId: string): Promise<WebhookDelivery> {
  const d = await deps.repos.webhooks.getDelivery(deliveryId);
  if (!d) throw new AppError("NOT_FOUND", { message: "Webhook delivery not found." });
  const e = await loadEndpoint(deps, actor, d.endpointId);
  if (!e.enabled) throw new AppError("WEBHOOK_DISABLED");
  const now = deps.clock.now();
  const effects: Effects = { audit: { actor, action: "webhook.redeliver", entityType: "webhook_delivery", entityId: d.id, productId: e.productId, changes: { endpoint_id: e.id, previous_status: d.status }, at: now } };
  const updated = await deps.db.transaction(async ({ repos }) => {
    const row = await repos.webhooks.redeliver(d.id, now);
    if (row) {
      await repos.outbox.writeEffects(effects);
      // Due now: wakes the delivery workers at the commit (outbox/bell.ts, NOTIFY on PostgreSQL).
      await repos.outbox.wakeDeliveryWork();
    }
    return row;
  });
  if (!updated) throw new AppError("NOT_FOUND", { message: "Webhook delivery not found." });
  return updated;
}

/** The event log: outbox event messages, newest first. `type` is exact, or `prefix.*`. */
export async function listEvents(
  deps: Deps,
  actor: Actor,
  filter: { type?: string; since?: Date; until?: Date; productId?: string; cursor?: string; limit: number },
): Promise<Page<OutboxMessage>> {
  const productId = scopedProductFilter(actor, filter.productId);
  const type = filter.type;
  const prefix = type?.endsWith(".*") ? type.slice(0, -1) : undefined;
  return await deps.repos.outbox.listEvents({
    type: prefix || type === "*" ? undefined : type,
    typePrefix: prefix,
    since: filter.since,
    until: filter.until,
    productId,
    cursor: filter.cursor,
    limit: filter.limit,
  });
}
