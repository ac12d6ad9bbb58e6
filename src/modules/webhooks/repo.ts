// Outgoing webhooks (Standard Webhooks; docs/webhooks.md): the endpoints admins register and one
// delivery row per (event, endpoint). The event outbox handler (handler.ts) fans an event out into
// deliveries; the deliver-webhooks pass (deliver.ts) claims due deliveries and POSTs them.
import type { Effects } from "../outbox/effects";

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

/** How one attempt ended (deliver.ts decides; settleDelivery records it). */
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

export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

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
   * Atomically claims up to `limit` pending deliveries due at `now` whose endpoint is enabled, oldest
   * due first, by moving their next_attempt_at to `leaseUntil` (the claim token for settleDelivery).
   * With `perEndpoint`, no endpoint gets more than `perEndpoint` minus its `inFlight` count
   * (domain.ts pickDeliveries): each enabled endpoint's due deliveries are read through the index,
   * at most that many, so a large backlog of one endpoint is never scanned. Exact across nodes: the
   * update takes only rows still pending and due, so no delivery is claimed twice while its claim holds.
   */
  claimDueDeliveries(input: { now: Date; limit: number; leaseUntil: Date; perEndpoint?: number; inFlight?: ReadonlyMap<string, number> }): Promise<WebhookDelivery[]>;
  /**
   * Records one attempt of a claimed delivery and its endpoint's failure count, in one transaction:
   * a success resets the count; a failure adds one, and when the count reaches `failureThreshold`
   * or the outcome says "gone" the endpoint is disabled and `disableEffects` are written — only by
   * the call that flipped it. `settled` false: the claim was lost (nothing recorded).
   */
  settleDelivery(input: {
    id: string;
    claim: Date;
    outcome: AttemptOutcome;
    failureThreshold: number;
    disableEffects: (reason: DisabledReason) => Effects;
  }): Promise<{ settled: boolean; disabled: DisabledReason | null }>;
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
