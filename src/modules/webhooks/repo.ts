// Outgoing webhooks (Standard Webhooks; docs/webhooks.md): the endpoints admins register and one
// delivery row per (event, endpoint). The event outbox handler (handler.ts) fans an event out into
// deliveries; the deliver-webhooks pass (deliver.ts) claims due deliveries and POSTs them.
import type { DueDelivery } from "./domain";

export const DELIVERY_STATUSES = ["pending", "delivered", "failed"] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/** manual: an admin disabled it; gone: the receiver answered 410; failures: too many failed attempts in a row. */
export const DISABLED_REASONS = ["manual", "gone", "failures"] as const;
export type DisabledReason = (typeof DISABLED_REASONS)[number];

export interface WebhookEndpoint {
  id: string;
  url: string;
  description: string;
  /** Filters: exact event types, `prefix.*`, or `*` (domain.ts). */
  events: string[];
  enabled: boolean;
  /** Only this product's events; null: every event. */
  productId: string | null;
  /** The `whsec_…` secret, sealed (secrets.ts). */
  secretEncrypted: string;
  /** The secret before the last rotation, also signed with until `previousSecretExpiresAt`. */
  previousSecretEncrypted: string | null;
  previousSecretExpiresAt: Date | null;
  /** Sealed Ed25519 seed of the `v1a` signature; null: no v1a. */
  signingKeyEncrypted: string | null;
  /** Its public key, raw 32 bytes in base64. */
  signingPublicKey: string | null;
  /** Failed attempts since the last success (any delivery). */
  consecutiveFailures: number;
  disabledReason: DisabledReason | null;
  disabledAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface WebhookDelivery {
  /** Also the `webhook-id` header: the same on every attempt. */
  id: string;
  endpointId: string;
  /** The outbox event message; null for a test event. */
  eventId: string | null;
  eventType: string;
  /** The JSON body exactly as sent. */
  body: string;
  status: DeliveryStatus;
  /** Attempts made (successful or not). */
  attempts: number;
  /** When it is due; while a node delivers it, the end of that node's claim. */
  nextAttemptAt: Date;
  lastAttemptAt: Date | null;
  lastResponseCode: number | null;
  lastLatencyMs: number | null;
  /** The first 2 KB of the last response body. */
  lastResponseBody: string | null;
  lastError: string | null;
  createdAt: Date;
  deliveredAt: Date | null;
}

export type EndpointChanges = Partial<
  Pick<
    WebhookEndpoint,
    | "url"
    | "description"
    | "events"
    | "enabled"
    | "productId"
    | "secretEncrypted"
    | "previousSecretEncrypted"
    | "previousSecretExpiresAt"
    | "signingKeyEncrypted"
    | "signingPublicKey"
    | "consecutiveFailures"
    | "disabledReason"
    | "disabledAt"
  >
> & { updatedAt: Date };

export interface EndpointFilter {
  /** Only endpoints scoped to this product. */
  productId?: string;
  cursor?: string;
  limit: number;
}

export interface DeliveryFilter {
  endpointId: string;
  status?: DeliveryStatus;
  /** Exact event type. */
  eventType?: string;
  cursor?: string;
  limit: number;
}

/** How one attempt ended (deliver.ts decides; claims.ts settleAttempt records it). */
export interface AttemptOutcome {
  at: Date;
  /** delivered: 2xx; retry: failed, due again at nextAttemptAt; failed: given up. */
  result: "delivered" | "retry" | "failed";
  nextAttemptAt: Date | null;
  responseCode: number | null;
  latencyMs: number | null;
  responseBody: string | null;
  error: string | null;
  /** "gone": the receiver answered 410, disable the endpoint now. */
  disable: "gone" | null;
}

/** An endpoint's health as a failed attempt finds it (domain.ts afterFailedAttempt). */
export type EndpointHealth = Pick<WebhookEndpoint, "enabled" | "consecutiveFailures">;

/** What an attempt changes on its endpoint: the failure count and, when it disables the endpoint, why and when. */
export type EndpointHealthChanges = Pick<WebhookEndpoint, "consecutiveFailures"> &
  Partial<Pick<WebhookEndpoint, "enabled" | "disabledReason" | "disabledAt" | "updatedAt">>;

export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

/**
 * Rows only: the rules of delivery (which due deliveries a claim takes, what an attempt does to its
 * endpoint) are claims.ts's units of work with domain.ts deciding, and whoever writes deliveries wakes
 * the delivery workers (OutboxRepo.wakeDeliveryWork).
 */
export interface WebhookRepo {
  createEndpoint(endpoint: WebhookEndpoint): Promise<WebhookEndpoint>;
  getEndpoint(id: string): Promise<WebhookEndpoint | null>;
  /** Newest first (created_at, then id), keyset-paginated. */
  listEndpoints(filter: EndpointFilter): Promise<Page<WebhookEndpoint>>;
  /** Every enabled endpoint (the fan-out reads them once per event). */
  listEnabledEndpoints(): Promise<WebhookEndpoint[]>;
  /** Applies `changes`; null when it does not exist. */
  updateEndpoint(id: string, changes: EndpointChanges): Promise<WebhookEndpoint | null>;
  /** Deletes it and its deliveries; false when it does not exist. */
  deleteEndpoint(id: string): Promise<boolean>;
  /**
   * Inserts pending deliveries in one statement, skipping any (event, endpoint) pair that already has
   * one (the outbox hands an event over at least once). Returns how many were inserted.
   */
  addDeliveries(rows: WebhookDelivery[]): Promise<number>;
  getDelivery(id: string): Promise<WebhookDelivery | null>;
  /** An endpoint's deliveries, newest first (created_at, then id), keyset-paginated. */
  listDeliveries(filter: DeliveryFilter): Promise<Page<WebhookDelivery>>;
  /**
   * The candidates of a claim (claims.ts claimDueDeliveries), in one statement: each enabled
   * endpoint's `window` oldest pending deliveries due at `now`, read through
   * webhook_deliveries_endpoint_due_idx, so a large backlog of one endpoint is never scanned.
   */
  dueDeliveries(now: Date, window: number): Promise<DueDelivery[]>;
  /**
   * Claims those of `ids` still pending and due at `now` by moving their next_attempt_at to
   * `leaseUntil` (the claim token for recordAttempt), in one statement; returns them. Exact across
   * nodes: a row another claim took meanwhile is no longer due and is left out (PostgreSQL re-checks
   * the condition on the row version it waited for).
   */
  claimDeliveries(ids: readonly string[], now: Date, leaseUntil: Date): Promise<WebhookDelivery[]>;
  /**
   * Records one attempt of the delivery claimed with `claim` (its status, attempt count, response
   * and, for a retry, when it is due again); returns its endpoint's id, or null when the claim was
   * lost (nothing recorded).
   */
  recordAttempt(id: string, claim: Date, outcome: AttemptOutcome): Promise<string | null>;
  /** The endpoint's health, its row locked until the unit of work ends; null when it does not exist. */
  lockEndpointHealth(id: string): Promise<EndpointHealth | null>;
  /** Writes what an attempt changed on its endpoint (claims.ts settleAttempt, domain.ts deciding). */
  setEndpointHealth(id: string, changes: EndpointHealthChanges): Promise<void>;
  /** Makes a delivery pending and due at `now` again (keeping its id and attempts); null when missing. */
  redeliver(id: string, now: Date): Promise<WebhookDelivery | null>;
  /**
   * One batch of the prune-history pass: deletes up to `limit` finished deliveries (delivered or
   * failed) whose next_attempt_at is before `before`, by primary key, in one short statement; returns
   * how many went. For a finished delivery next_attempt_at is the end of its last claim (about its
   * last attempt); a redelivery makes it pending again and due now, so a delivery redelivered
   * recently is never old. Pending deliveries (due, retrying, or waiting for a disabled endpoint) are
   * never deleted, also when a redelivery commits while the batch runs (on PostgreSQL the DELETE
   * re-checks status and age on the row it waited for; SQLite runs the batch as one atomic statement).
   */
  pruneFinishedDeliveries(before: Date, limit: number): Promise<number>;
}

/** Statuses a delivery leaves only through a redelivery (the ones prune-history may delete). */
export const FINISHED_DELIVERY_STATUSES = ["delivered", "failed"] as const satisfies readonly DeliveryStatus[];
