import { and, asc, desc, eq, inArray, lt, lte, sql, type SQL } from "drizzle-orm";
import { immediate, lazyStatement, lift, type DbHandle } from "../../db/client";
import { afterCursor, decodeCursor, keysetPage } from "../../db/cursor";
import { webhookDeliveries, webhookEndpoints } from "../../db/schema";
import { ringDeliveryBell } from "../outbox/bell";
import { writeEffects } from "../outbox/write.sqlite";
import { endpointWindow, pickDeliveries } from "./domain";
import { FINISHED_DELIVERY_STATUSES, type DeliveryFilter, type DisabledReason, type WebhookDelivery, type WebhookEndpoint, type WebhookRepo } from "./repo";

type EndpointRow = typeof webhookEndpoints.$inferSelect;
const toEndpoint = (r: EndpointRow): WebhookEndpoint => ({ ...r, disabledReason: r.disabledReason as DisabledReason | null });
const toDelivery = (r: typeof webhookDeliveries.$inferSelect): WebhookDelivery => r as WebhookDelivery;

/**
 * One endpoint's `window` oldest deliveries due at `now`, read through
 * webhook_deliveries_endpoint_due_idx (exported for the query-plan test).
 */
export function claimWindow(db: DbHandle["db"], endpointId: string, now: Date, window: number) {
  return db
    .select({ id: webhookDeliveries.id, endpointId: webhookDeliveries.endpointId, nextAttemptAt: webhookDeliveries.nextAttemptAt })
    .from(webhookDeliveries)
    .where(and(eq(webhookDeliveries.endpointId, endpointId), eq(webhookDeliveries.status, "pending"), lte(webhookDeliveries.nextAttemptAt, now)))
    .orderBy(asc(webhookDeliveries.nextAttemptAt), asc(webhookDeliveries.id))
    .limit(window);
}

/** GET /admin/webhooks/:id/deliveries' one statement for a filter (exported for the query-plan test). */
export function deliveryListQuery(db: DbHandle["db"], f: DeliveryFilter) {
  const where: SQL[] = [eq(webhookDeliveries.endpointId, f.endpointId)];
  if (f.status) where.push(eq(webhookDeliveries.status, f.status));
  if (f.eventType) where.push(eq(webhookDeliveries.eventType, f.eventType));
  if (f.cursor) where.push(afterCursor(webhookDeliveries.createdAt, webhookDeliveries.id, decodeCursor(f.cursor)));
  return db
    .select()
    .from(webhookDeliveries)
    .where(and(...where))
    .orderBy(desc(webhookDeliveries.createdAt), desc(webhookDeliveries.id))
    .limit(f.limit + 1);
}

export function createWebhookRepo(handle: DbHandle): WebhookRepo {
  const { db } = handle;
  // Read for every event fanned out (webhooks/handler.ts): prepared once.
  const enabledEndpoints = lazyStatement(() =>
    db.select().from(webhookEndpoints).where(eq(webhookEndpoints.enabled, true)).orderBy(asc(webhookEndpoints.id)).prepare(),
  );
  const getEndpoint = (id: string) => {
    const r = db.select().from(webhookEndpoints).where(eq(webhookEndpoints.id, id)).get();
    return r ? toEndpoint(r) : null;
  };
  const getDelivery = (id: string) => {
    const r = db.select().from(webhookDeliveries).where(eq(webhookDeliveries.id, id)).get();
    return r ? toDelivery(r) : null;
  };
  return {
    async createEndpoint(endpoint) {
      return immediate(handle, () => {
        db.insert(webhookEndpoints).values(endpoint).run();
        return getEndpoint(endpoint.id)!;
      });
    },
    getEndpoint: lift(getEndpoint),
    async listEndpoints(f) {
      const where: SQL[] = [];
      if (f.productId !== undefined) where.push(eq(webhookEndpoints.productId, f.productId));
      if (f.cursor) where.push(afterCursor(webhookEndpoints.createdAt, webhookEndpoints.id, decodeCursor(f.cursor)));
      const rows = db
        .select()
        .from(webhookEndpoints)
        .where(and(...where))
        .orderBy(desc(webhookEndpoints.createdAt), desc(webhookEndpoints.id))
        .limit(f.limit + 1)
        .all()
        .map(toEndpoint);
      return keysetPage(rows, f.limit);
    },
    async listEnabledEndpoints() {
      return enabledEndpoints().all().map(toEndpoint);
    },
    async updateEndpoint(id, changes) {
      return immediate(handle, () => {
        const done = db.update(webhookEndpoints).set(changes).where(eq(webhookEndpoints.id, id)).returning({ id: webhookEndpoints.id }).all();
        if (done.length === 0) return null;
        return getEndpoint(id);
      });
    },
    async deleteEndpoint(id) {
      return immediate(handle, () => {
        const done = db.delete(webhookEndpoints).where(eq(webhookEndpoints.id, id)).returning({ id: webhookEndpoints.id }).all();
        if (done.length === 0) return false;
        return true;
      });
    },
    async addDeliveries(rows) {
      return immediate(handle, () => {
        const added = rows.length === 0 ? 0 : db.insert(webhookDeliveries).values(rows).onConflictDoNothing().returning({ id: webhookDeliveries.id }).all().length;
        if (added > 0) ringDeliveryBell();
        return added;
      });
    },
    getDelivery: lift(getDelivery),
    async listDeliveries(f) {
      return keysetPage(deliveryListQuery(db, f).all().map(toDelivery), f.limit);
    },
    async claimDueDeliveries({ now, limit, leaseUntil, perEndpoint, inFlight }) {
      if (limit <= 0) return [];
      const room = { limit, perEndpoint: perEndpoint ?? limit, inFlight };
      // IMMEDIATE: the write lock is taken before the read, so two processes never pick the same rows.
      return immediate(handle, () => {
        const endpoints = db.select({ id: webhookEndpoints.id }).from(webhookEndpoints).where(eq(webhookEndpoints.enabled, true)).all();
        const candidates = endpoints.flatMap((e) => {
          const window = endpointWindow(e.id, room);
          if (window === 0) return [];
          return claimWindow(db, e.id, now, window).all();
        });
        const ids = pickDeliveries(candidates, room);
        if (ids.length === 0) return [];
        const claimed = db
          .update(webhookDeliveries)
          .set({ nextAttemptAt: leaseUntil })
          .where(and(inArray(webhookDeliveries.id, ids), eq(webhookDeliveries.status, "pending"), lte(webhookDeliveries.nextAttemptAt, now)))
          .returning()
          .all()
          .map(toDelivery);
        return claimed.sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
      });
    },
    async settleDelivery({ id, claim, outcome, failureThreshold, disableEffects }) {
      return immediate(handle, () => {
        const done = db
          .update(webhookDeliveries)
          .set({
            status: outcome.result === "retry" ? "pending" : outcome.result,
            attempts: sql`${webhookDeliveries.attempts} + 1`,
            lastAttemptAt: outcome.at,
            lastResponseCode: outcome.responseCode,
            lastLatencyMs: outcome.latencyMs,
            lastResponseBody: outcome.responseBody,
            lastError: outcome.error,
            ...(outcome.result === "retry" && outcome.nextAttemptAt ? { nextAttemptAt: outcome.nextAttemptAt } : {}),
            ...(outcome.result === "delivered" ? { deliveredAt: outcome.at } : {}),
          })
          .where(and(eq(webhookDeliveries.id, id), eq(webhookDeliveries.status, "pending"), eq(webhookDeliveries.nextAttemptAt, claim)))
          .returning({ endpointId: webhookDeliveries.endpointId })
          .all();
        const settled = done[0];
        if (!settled) return { settled: false, disabled: null };
        if (outcome.result === "delivered") {
          db.update(webhookEndpoints).set({ consecutiveFailures: 0 }).where(eq(webhookEndpoints.id, settled.endpointId)).run();
          return { settled: true, disabled: null };
        }
        const [counted] = db
          .update(webhookEndpoints)
          .set({ consecutiveFailures: sql`${webhookEndpoints.consecutiveFailures} + 1` })
          .where(eq(webhookEndpoints.id, settled.endpointId))
          .returning({ failures: webhookEndpoints.consecutiveFailures })
          .all();
        if (!counted) return { settled: true, disabled: null };
        const reason: DisabledReason | null = outcome.disable === "gone" ? "gone" : counted.failures >= failureThreshold ? "failures" : null;
        if (!reason) return { settled: true, disabled: null };
        const flipped = db
          .update(webhookEndpoints)
          .set({ enabled: false, disabledReason: reason, disabledAt: outcome.at, updatedAt: outcome.at })
          .where(and(eq(webhookEndpoints.id, settled.endpointId), eq(webhookEndpoints.enabled, true)))
          .returning({ id: webhookEndpoints.id })
          .all();
        if (flipped.length === 0) return { settled: true, disabled: null };
        writeEffects(db, disableEffects(reason));
        return { settled: true, disabled: reason };
      });
    },
    async redeliver(id, now) {
      return immediate(handle, () => {
        const done = db
          .update(webhookDeliveries)
          .set({ status: "pending", nextAttemptAt: now })
          .where(eq(webhookDeliveries.id, id))
          .returning({ id: webhookDeliveries.id })
          .all();
        if (done.length === 0) return null;
        ringDeliveryBell();
        return getDelivery(id);
      });
    },
    async pruneFinishedDeliveries(before, limit) {
      if (limit <= 0) return 0;
      // One statement, so one short write transaction: other writers wait for a batch at most. The
      // rows are deleted by primary key (SQLite has one writer: nothing changes them in between).
      const finished = and(inArray(webhookDeliveries.status, [...FINISHED_DELIVERY_STATUSES]), lt(webhookDeliveries.nextAttemptAt, before));
      const batch = db.select({ id: webhookDeliveries.id }).from(webhookDeliveries).where(finished).limit(limit);
      return db.delete(webhookDeliveries).where(inArray(webhookDeliveries.id, batch)).returning({ id: webhookDeliveries.id }).all().length;
    },
  };
}
