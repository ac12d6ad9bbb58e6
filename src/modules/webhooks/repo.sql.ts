// WebhookRepo on both engines, written once against the query seam (db/dialect/query.ts).
import { and, asc, desc, eq, inArray, lt, lte, sql, type SQL } from "drizzle-orm";
import type { QueryDialect } from "../../db/dialect/query";
import { afterCursor, decodeCursor, keysetPage } from "../../db/cursor";
import { FINISHED_DELIVERY_STATUSES, type DeliveryFilter, type DisabledReason, type WebhookDelivery, type WebhookEndpoint, type WebhookRepo } from "./repo";

type Tables = QueryDialect["tables"];
const toEndpoint = (r: Tables["webhookEndpoints"]["$inferSelect"]): WebhookEndpoint => ({ ...r, disabledReason: r.disabledReason as DisabledReason | null });
const toDelivery = (r: Tables["webhookDeliveries"]["$inferSelect"]): WebhookDelivery => r as WebhookDelivery;

/**
 * Each enabled endpoint's `window` oldest pending deliveries due at `now`, one index range of
 * webhook_deliveries_endpoint_due_idx per endpoint (exported for the query-plan tests): the endpoints
 * drive the read, so a large backlog of one endpoint is never scanned.
 */
export function dueDeliveriesQuery(d: QueryDialect, now: Date, window: number) {
  const { webhookDeliveries: w, webhookEndpoints: e } = d.tables;
  // One endpoint's window: correlated with the outer endpoint row. Inside it the table's name is the
  // subquery's own webhook_deliveries (the innermost one in scope), the outer one is not referred to.
  const windowIds = d.db
    .select({ id: w.id })
    .from(w)
    .where(and(eq(w.endpointId, e.id), eq(w.status, "pending"), lte(w.nextAttemptAt, now)))
    .orderBy(asc(w.nextAttemptAt), asc(d.byteOrder(w.id)))
    .limit(window);
  // The one difference between the engines, unavoidable. SQLite has no LATERAL join and no arrays;
  // it looks each id of a correlated `IN (subquery)` up by primary key. PostgreSQL cannot use a
  // correlated IN as an index condition: it filters every row of the join with it, a scan of the
  // table (5.8 s over 20,000 deliveries, measured). `= ANY(ARRAY(subquery))` it can, as a nested loop
  // that reads each endpoint's window and then those rows by primary key (0.7 ms there; the LATERAL
  // join the PostgreSQL repository had took 0.5 ms). The CROSS JOIN keeps SQLite from reordering the
  // join: as an inner join it walked the whole of webhook_deliveries_endpoint_due_idx instead, running
  // the subquery for every row.
  const inWindow = d.engine === "postgres" ? sql`${w.id} = ANY(ARRAY${windowIds})` : inArray(w.id, windowIds);
  return d.db
    .select({ id: w.id, endpointId: w.endpointId, nextAttemptAt: w.nextAttemptAt })
    .from(e)
    .crossJoin(w)
    .where(and(eq(e.enabled, true), inWindow));
}

/** GET /admin/webhooks/:id/deliveries' one statement for a filter (exported for the query-plan test). */
export function deliveryListQuery(d: QueryDialect, f: DeliveryFilter) {
  const { webhookDeliveries } = d.tables;
  const where: SQL[] = [eq(webhookDeliveries.endpointId, f.endpointId)];
  if (f.status) where.push(eq(webhookDeliveries.status, f.status));
  if (f.eventType) where.push(eq(webhookDeliveries.eventType, f.eventType));
  if (f.cursor) where.push(afterCursor(webhookDeliveries.createdAt, d.byteOrder(webhookDeliveries.id), decodeCursor(f.cursor)));
  return d.db
    .select()
    .from(webhookDeliveries)
    .where(and(...where))
    .orderBy(desc(webhookDeliveries.createdAt), desc(d.byteOrder(webhookDeliveries.id)))
    .limit(f.limit + 1);
}

export function createWebhookRepo(d: QueryDialect): WebhookRepo {
  const { db } = d;
  const { webhookEndpoints, webhookDeliveries } = d.tables;
  // Read for every event fanned out (webhooks/handler.ts): prepared once.
  const enabledEndpoints = d.prepared("webhook_enabled_endpoints", () =>
    db.select().from(webhookEndpoints).where(eq(webhookEndpoints.enabled, true)).orderBy(d.byteOrder(webhookEndpoints.id)),
  );
  return {
    async createEndpoint(endpoint) {
      const [row] = await db.insert(webhookEndpoints).values(endpoint).returning();
      return toEndpoint(row!);
    },
    async getEndpoint(id) {
      const [row] = await db.select().from(webhookEndpoints).where(eq(webhookEndpoints.id, id));
      return row ? toEndpoint(row) : null;
    },
    async listEndpoints(f) {
      const where: SQL[] = [];
      if (f.productId !== undefined) where.push(eq(webhookEndpoints.productId, f.productId));
      if (f.cursor) where.push(afterCursor(webhookEndpoints.createdAt, d.byteOrder(webhookEndpoints.id), decodeCursor(f.cursor)));
      const rows = await db
        .select()
        .from(webhookEndpoints)
        .where(and(...where))
        .orderBy(desc(webhookEndpoints.createdAt), desc(d.byteOrder(webhookEndpoints.id)))
        .limit(f.limit + 1);
      return keysetPage(rows.map(toEndpoint), f.limit);
    },
    async listEnabledEndpoints() {
      return (await enabledEndpoints({})).map(toEndpoint);
    },
    async updateEndpoint(id, changes) {
      const [row] = await db.update(webhookEndpoints).set(changes).where(eq(webhookEndpoints.id, id)).returning();
      return row ? toEndpoint(row) : null;
    },
    async deleteEndpoint(id) {
      return (await db.delete(webhookEndpoints).where(eq(webhookEndpoints.id, id)).returning({ id: webhookEndpoints.id })).length > 0;
    },
    async addDeliveries(rows) {
      if (rows.length === 0) return 0;
      return (await db.insert(webhookDeliveries).values(rows).onConflictDoNothing().returning({ id: webhookDeliveries.id })).length;
    },
    async getDelivery(id) {
      const [row] = await db.select().from(webhookDeliveries).where(eq(webhookDeliveries.id, id));
      return row ? toDelivery(row) : null;
    },
    async listDeliveries(f) {
      return keysetPage((await deliveryListQuery(d, f)).map(toDelivery), f.limit);
    },
    async dueDeliveries(now, window) {
      return await dueDeliveriesQuery(d, now, window);
    },
    async claimDeliveries(ids, now, leaseUntil) {
      if (ids.length === 0) return [];
      // The fence: a row another node claimed meanwhile is no longer due (its next_attempt_at is that
      // node's lease), and PostgreSQL re-checks the condition on the row version it waited for.
      const claimed = await db
        .update(webhookDeliveries)
        .set({ nextAttemptAt: leaseUntil })
        .where(and(inArray(webhookDeliveries.id, [...ids]), eq(webhookDeliveries.status, "pending"), lte(webhookDeliveries.nextAttemptAt, now)))
        .returning();
      return claimed.map(toDelivery);
    },
    async recordAttempt(id, claim, outcome) {
      const [settled] = await db
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
        .returning({ endpointId: webhookDeliveries.endpointId });
      return settled?.endpointId ?? null;
    },
    async lockEndpointHealth(id) {
      // FOR NO KEY UPDATE on PostgreSQL: the fan-out's inserts of this endpoint's deliveries (their
      // foreign key takes a key-share lock on it) do not wait for an attempt being settled.
      const columns = { enabled: webhookEndpoints.enabled, consecutiveFailures: webhookEndpoints.consecutiveFailures };
      return (await d.forUpdate(db.select(columns).from(webhookEndpoints).where(eq(webhookEndpoints.id, id)), "no key update"))[0] ?? null;
    },
    async setEndpointHealth(id, changes) {
      await db.update(webhookEndpoints).set(changes).where(eq(webhookEndpoints.id, id));
    },
    async redeliver(id, now) {
      const [row] = await db.update(webhookDeliveries).set({ status: "pending", nextAttemptAt: now }).where(eq(webhookDeliveries.id, id)).returning();
      return row ? toDelivery(row) : null;
    },
    async pruneFinishedDeliveries(before, limit) {
      if (limit <= 0) return 0;
      // One statement, so one short write transaction: other writers wait for a batch at most. The
      // conditions are repeated on the DELETE itself: PostgreSQL re-checks them against a row another
      // transaction changed meanwhile, so a delivery redelivered concurrently stays (SQLite has one
      // writer: nothing changes the rows between the batch's read and its delete).
      const finished = and(inArray(webhookDeliveries.status, [...FINISHED_DELIVERY_STATUSES]), lt(webhookDeliveries.nextAttemptAt, before));
      const batch = db.select({ id: webhookDeliveries.id }).from(webhookDeliveries).where(finished).limit(limit);
      return (await db.delete(webhookDeliveries).where(and(inArray(webhookDeliveries.id, batch), finished)).returning({ id: webhookDeliveries.id })).length;
    },
  };
}
