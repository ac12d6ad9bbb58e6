import { and, asc, eq, inArray, lt, lte, sql, type SQL } from "drizzle-orm";
import type { PgExecutor, PgHandle } from "../../db/pg";
import { afterCursor, decodeCursor, keysetPage } from "../../db/cursor";
import { webhookDeliveries, webhookEndpoints } from "../../db/schema-pg";
import { notifyDelivery, writeEffectsPg } from "../outbox/write.pg";
import { pickDeliveries } from "./domain";
import { FINISHED_DELIVERY_STATUSES, type DeliveryFilter, type DisabledReason, type WebhookDelivery, type WebhookEndpoint, type WebhookRepo } from "./repo";

type EndpointRow = typeof webhookEndpoints.$inferSelect;
const toEndpoint = (r: EndpointRow): WebhookEndpoint => ({ ...r, disabledReason: r.disabledReason as DisabledReason | null });
const toDelivery = (r: typeof webhookDeliveries.$inferSelect): WebhookDelivery => r as WebhookDelivery;
/** Ids compared in byte order (SQLite's text comparison), whatever the database collation. */
const bytes = (col: typeof webhookEndpoints.id | typeof webhookDeliveries.id) => sql`${col} COLLATE "C"`;
/** Read-and-claim rounds of one claimDueDeliveries call when other nodes take the rows it picked. */
const CLAIM_ROUNDS = 5;
const byAge = (a: WebhookDelivery, b: WebhookDelivery) => a.createdAt.getTime() - b.createdAt.getTime() || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/**
 * Each enabled endpoint's `window` oldest deliveries due at `now`, read through
 * webhook_deliveries_endpoint_due_idx (exported for the query-plan test).
 */
export function claimWindowPg(now: Date, window: number): SQL {
  return sql`
    SELECT d.id, d.endpoint_id, (extract(epoch FROM d.next_attempt_at) * 1000)::float8 AS due_ms
    FROM ${webhookEndpoints} e
    CROSS JOIN LATERAL (
      SELECT w.id, w.endpoint_id, w.next_attempt_at FROM ${webhookDeliveries} w
      WHERE w.endpoint_id = e.id AND w.status = 'pending' AND w.next_attempt_at <= ${now.toISOString()}::timestamptz
      ORDER BY w.next_attempt_at, w.id COLLATE "C"
      LIMIT ${window}
    ) d
    WHERE e.enabled`;
}

/** GET /admin/webhooks/:id/deliveries' one statement for a filter (exported for the query-plan test). */
export function deliveryListQueryPg(db: PgHandle["db"], f: DeliveryFilter) {
  const where: SQL[] = [eq(webhookDeliveries.endpointId, f.endpointId)];
  if (f.status) where.push(eq(webhookDeliveries.status, f.status));
  if (f.eventType) where.push(eq(webhookDeliveries.eventType, f.eventType));
  if (f.cursor) where.push(afterCursor(webhookDeliveries.createdAt, bytes(webhookDeliveries.id), decodeCursor(f.cursor)));
  return db
    .select()
    .from(webhookDeliveries)
    .where(and(...where))
    .orderBy(sql`${webhookDeliveries.createdAt} DESC`, sql`${bytes(webhookDeliveries.id)} DESC`)
    .limit(f.limit + 1);
}

export function createWebhookRepoPg(handle: PgHandle): WebhookRepo {
  const { db } = handle;
  const getEndpoint = async (id: string) => {
    const [r] = await db.select().from(webhookEndpoints).where(eq(webhookEndpoints.id, id));
    return r ? toEndpoint(r) : null;
  };
  const getDelivery = async (id: string) => {
    const [r] = await db.select().from(webhookDeliveries).where(eq(webhookDeliveries.id, id));
    return r ? toDelivery(r) : null;
  };
  return {
    async createEndpoint(endpoint) {
      return await db.transaction(async (tx) => {
        const [row] = await tx.insert(webhookEndpoints).values(endpoint).returning();
        return toEndpoint(row!);
      });
    },
    getEndpoint,
    async listEndpoints(f) {
      const where: SQL[] = [];
      if (f.productId !== undefined) where.push(eq(webhookEndpoints.productId, f.productId));
      if (f.cursor) where.push(afterCursor(webhookEndpoints.createdAt, bytes(webhookEndpoints.id), decodeCursor(f.cursor)));
      const rows = await db
        .select()
        .from(webhookEndpoints)
        .where(and(...where))
        .orderBy(sql`${webhookEndpoints.createdAt} DESC`, sql`${bytes(webhookEndpoints.id)} DESC`)
        .limit(f.limit + 1);
      return keysetPage(rows.map(toEndpoint), f.limit);
    },
    async listEnabledEndpoints() {
      const rows = await db.select().from(webhookEndpoints).where(eq(webhookEndpoints.enabled, true)).orderBy(bytes(webhookEndpoints.id));
      return rows.map(toEndpoint);
    },
    async updateEndpoint(id, changes) {
      return await db.transaction(async (tx) => {
        const [row] = await tx.update(webhookEndpoints).set(changes).where(eq(webhookEndpoints.id, id)).returning();
        if (!row) return null;
        return toEndpoint(row);
      });
    },
    async deleteEndpoint(id) {
      return await db.transaction(async (tx) => {
        const done = await tx.delete(webhookEndpoints).where(eq(webhookEndpoints.id, id)).returning({ id: webhookEndpoints.id });
        if (done.length === 0) return false;
        return true;
      });
    },
    async addDeliveries(rows) {
      const insert = async (tx: PgExecutor) => {
        if (rows.length === 0) return 0;
        const added = (await tx.insert(webhookDeliveries).values(rows).onConflictDoNothing().returning({ id: webhookDeliveries.id })).length;
        if (added > 0) await notifyDelivery(tx);
        return added;
      };
      return await insert(db);
    },
    getDelivery,
    async listDeliveries(f) {
      return keysetPage((await deliveryListQueryPg(db, f)).map(toDelivery), f.limit);
    },
    async claimDueDeliveries({ now, limit, leaseUntil, perEndpoint, inFlight }) {
      const out: WebhookDelivery[] = [];
      const busy = new Map(inFlight ?? []);
      // Another node may claim rows this one picked between the read and the update (the update then
      // skips them): pick again from what is still due, a few times at most.
      for (let round = 0; round < CLAIM_ROUNDS && out.length < limit; round++) {
        const room = { limit: limit - out.length, perEndpoint: perEndpoint ?? limit, inFlight: busy };
        // Each enabled endpoint's oldest due deliveries, read through webhook_deliveries_endpoint_due_idx
        // (at most `window` per endpoint, so a large backlog of one endpoint is never scanned).
        const window = Math.max(1, Math.min(room.limit, room.perEndpoint));
        const rows = (await db.execute(claimWindowPg(now, window))) as unknown as { id: string; endpoint_id: string; due_ms: number }[];
        const ids = pickDeliveries(
          rows.map((r) => ({ id: r.id, endpointId: r.endpoint_id, nextAttemptAt: new Date(r.due_ms) })),
          room,
        );
        if (ids.length === 0) break;
        // The fence: a row another node claimed meanwhile is no longer due (its next_attempt_at is that
        // node's lease), and PostgreSQL re-checks the condition on the row version it waited for.
        const claimed = await db
          .update(webhookDeliveries)
          .set({ nextAttemptAt: leaseUntil })
          .where(and(inArray(webhookDeliveries.id, ids), eq(webhookDeliveries.status, "pending"), lte(webhookDeliveries.nextAttemptAt, now)))
          .returning();
        for (const r of claimed) {
          out.push(toDelivery(r));
          busy.set(r.endpointId, (busy.get(r.endpointId) ?? 0) + 1);
        }
        if (claimed.length === ids.length) break;
      }
      return out.sort(byAge);
    },
    async settleDelivery({ id, claim, outcome, failureThreshold, disableEffects }) {
      return await db.transaction(async (tx) => {
        const [settled] = await tx
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
        if (!settled) return { settled: false, disabled: null };
        if (outcome.result === "delivered") {
          await tx.update(webhookEndpoints).set({ consecutiveFailures: 0 }).where(eq(webhookEndpoints.id, settled.endpointId));
          return { settled: true, disabled: null };
        }
        // The increment locks the endpoint row until commit: concurrent failures count one by one.
        const [counted] = await tx
          .update(webhookEndpoints)
          .set({ consecutiveFailures: sql`${webhookEndpoints.consecutiveFailures} + 1` })
          .where(eq(webhookEndpoints.id, settled.endpointId))
          .returning({ failures: webhookEndpoints.consecutiveFailures });
        if (!counted) return { settled: true, disabled: null };
        const reason: DisabledReason | null = outcome.disable === "gone" ? "gone" : counted.failures >= failureThreshold ? "failures" : null;
        if (!reason) return { settled: true, disabled: null };
        // Conditional: of several nodes reaching the threshold, only the one that flips it writes the effects.
        const flipped = await tx
          .update(webhookEndpoints)
          .set({ enabled: false, disabledReason: reason, disabledAt: outcome.at, updatedAt: outcome.at })
          .where(and(eq(webhookEndpoints.id, settled.endpointId), eq(webhookEndpoints.enabled, true)))
          .returning({ id: webhookEndpoints.id });
        if (flipped.length === 0) return { settled: true, disabled: null };
        await writeEffectsPg(tx, disableEffects(reason));
        return { settled: true, disabled: reason };
      });
    },
    async redeliver(id, now) {
      return await db.transaction(async (tx) => {
        const [row] = await tx.update(webhookDeliveries).set({ status: "pending", nextAttemptAt: now }).where(eq(webhookDeliveries.id, id)).returning();
        if (!row) return null;
        await notifyDelivery(tx);
        return toDelivery(row);
      });
    },
    async pruneFinishedDeliveries(before, limit) {
      if (limit <= 0) return 0;
      // The conditions are repeated on the DELETE itself: PostgreSQL re-checks them against a row
      // another transaction changed meanwhile, so a delivery redelivered concurrently stays.
      const finished = and(inArray(webhookDeliveries.status, [...FINISHED_DELIVERY_STATUSES]), lt(webhookDeliveries.nextAttemptAt, before));
      const batch = db.select({ id: webhookDeliveries.id }).from(webhookDeliveries).where(finished).limit(limit);
      return (await db.delete(webhookDeliveries).where(and(inArray(webhookDeliveries.id, batch), finished)).returning({ id: webhookDeliveries.id })).length;
    },
  };
}
