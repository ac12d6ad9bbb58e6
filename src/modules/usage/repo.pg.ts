import { and, eq } from "drizzle-orm";
import type { PgHandle, PgExecutor, PgSql } from "../../db/pg";
import { auditLog, meterQueue, outbox, quotaExceededMarks, usageCounters, usageEvents } from "../../db/schema-pg";
import { notifyDelivery, writeEffectsPg } from "../outbox/write.pg";
import { auditRow, outboxMessages, outboxRow, type Effects } from "../outbox/effects";
import { rawAccess, readLicenseAccess, type RawPlanRow } from "../license-api/repo.pg";
import type { RawLicenseRow } from "../license-api/raw-rows";
import { storeOutcomePg } from "../idempotency/repo.pg";
import { newId } from "../../shared/ids";
import { fits } from "../entitlements/quota";
import type { Recorder } from "../idempotency/repo";
import type { ConsumeInput, ConsumeResult, UsageCounter, UsageRepo } from "./repo";
import { settleEach, type Outcome, type WaitingReport } from "./batch";

const keyOf = (licenseId: string, feature: string, periodKey: string) =>
  and(eq(usageCounters.licenseId, licenseId), eq(usageCounters.feature, feature), eq(usageCounters.periodKey, periodKey));

async function readUsed(tx: PgExecutor, licenseId: string, feature: string, periodKey: string, forUpdate = false): Promise<number> {
  const q = tx.select({ used: usageCounters.used }).from(usageCounters).where(keyOf(licenseId, feature, periodKey));
  const [row] = forUpdate ? await q.for("update") : await q;
  return row?.used ?? 0;
}

type LockedLicenseRow = RawLicenseRow & RawPlanRow;
const accessOf = rawAccess;

/** One report waiting for its counter's next batch. */
type Pending = WaitingReport;

export function createUsageRepoPg(handle: PgHandle): UsageRepo {
  const { db } = handle;

  /**
   * Reports of one counter, applied in order in ONE write transaction: the license row is locked
   * (`FOR UPDATE`: a revoke or suspend that committed after the caller's lookup wins, as on
   * activation) and so is the counter row, then each report is checked and decided against the
   * running value exactly as if it ran alone (spec: License rule 3), and the counter, the usage events
   * and every report's side effects are written before the one COMMIT. A report with an
   * Idempotency-Key (`record`) always runs in a batch of its own, so that a lost claim rolls back its
   * own effect and nothing else.
   */
  async function applyBatch(batch: Pending[]): Promise<void> {
    const first = batch[0]!.input;
    const { licenseId, feature, periodKey } = first;
    const settled: Outcome[] = [];
    // The batch's own write, when COMMIT went out right behind it (see below).
    let sentWithCommit: Promise<unknown> | null = null;
    try {
      await db.transaction(async (tx) => {
        settled.length = 0;
        // The batch's statements are raw and prepared on the transaction's connection: drizzle's
        // unprepared statements cost two round trips each (describe, then execute), with the locks held.
        const raw = (tx as unknown as { session: { client: PgSql } }).session.client;
        // Both locks in one round trip (the statements are pipelined and run in this order): the
        // license row, then the counter row, so that an admin reset (which does not lock the
        // license) waits for this batch too.
        const [licenseRows, counterRows] = await Promise.all([
          raw<LockedLicenseRow[]>`
            SELECT l.id, l.product_id, l.plan_id, l.status,
                   (extract(epoch FROM l.valid_until) * 1000)::float8 AS valid_until,
                   (extract(epoch FROM l.support_until) * 1000)::float8 AS support_until,
                   l.external_customer_id, l.external_workspace_id,
                   p.name, p.grace_days, p.max_activations, p.floating, p.floating_timeout, p.quota_period
              FROM licenses l JOIN plans p ON p.id = l.plan_id WHERE l.id = ${licenseId} FOR UPDATE OF l`,
          raw<{ used: number }[]>`
            SELECT used FROM usage_counters WHERE license_id = ${licenseId} AND feature = ${feature} AND period_key = ${periodKey} FOR UPDATE`,
        ]);
        const current = licenseRows[0] ? accessOf(licenseRows[0]) : null;
        const start = counterRows[0]?.used ?? 0;
        let used = start;
        let marked: boolean | null = null;
        const events = { id: [] as string[], quantity: [] as string[], metadata: [] as (string | null)[], at: [] as string[] };
        // Accepted reports of a metered feature: one meter event each (docs/payments.md "Metered billing").
        const metered = { id: [] as string[], eventName: [] as string[], quantity: [] as string[], at: [] as string[] };
        const effects: Effects[] = [];
        const completions: ReturnType<Recorder<ConsumeResult>>[] = [];
        for (const p of batch) {
          try {
            p.check(current);
          } catch (error) {
            settled.push({ error });
            continue;
          }
          const { quantity, limit, at } = p.input;
          if (!fits({ used, limit }, quantity)) {
            // The first refusal of a period leaves a mark; only the report whose insert took is the first.
            let firstRefusal = false;
            if (marked === null) {
              const inserted = await tx
                .insert(quotaExceededMarks)
                .values({ licenseId, feature, periodKey, createdAt: at })
                .onConflictDoNothing()
                .returning({ licenseId: quotaExceededMarks.licenseId });
              firstRefusal = inserted.length === 1;
              marked = true;
            }
            if (p.effects) effects.push(p.effects({ accepted: false, used, firstRefusal }));
            settled.push({ ok: { accepted: false, used } });
            continue;
          }
          const before = used;
          used += quantity;
          events.id.push(newId());
          events.quantity.push(String(quantity));
          events.metadata.push(p.input.metadata == null ? null : JSON.stringify(p.input.metadata));
          events.at.push(at.toISOString());
          if (p.input.meter) {
            metered.id.push(newId());
            metered.eventName.push(p.input.meter);
            metered.quantity.push(String(quantity));
            metered.at.push(at.toISOString());
          }
          const result = { accepted: true, used };
          if (p.effects) effects.push(p.effects({ accepted: true, before, used }));
          if (p.record) completions.push(p.record(result));
          settled.push({ ok: result });
        }
        // The writes go out together (postgres.js pipelines them on the transaction's connection).
        const writes: Promise<unknown>[] = [];
        if (events.id.length > 0) {
          // The counter and every accepted report's event in one statement.
          writes.push(raw`
            WITH counter AS (
              INSERT INTO usage_counters (license_id, feature, period_key, used, updated_at)
              VALUES (${licenseId}, ${feature}, ${periodKey}, ${used}, ${events.at[events.at.length - 1]!}::timestamptz)
              ON CONFLICT (license_id, feature, period_key) DO UPDATE SET used = excluded.used, updated_at = excluded.updated_at
              RETURNING 1)
            INSERT INTO usage_events (id, license_id, feature, period_key, quantity, metadata, created_at)
            SELECT e.id, ${licenseId}, ${feature}, ${periodKey}, e.quantity::int8, e.metadata::jsonb, e.created_at::timestamptz
              FROM unnest(${events.id}::text[], ${events.quantity}::text[], ${events.metadata}::text[], ${events.at}::text[])
                   AS e(id, quantity, metadata, created_at)`);
        }
        if (metered.id.length > 0) {
          writes.push(raw`
            INSERT INTO meter_queue (id, license_id, feature, event_name, quantity, occurred_at, status, attempts, next_attempt_at)
            SELECT m.id, ${licenseId}, ${feature}, m.event_name, m.quantity::int8, m.at::timestamptz, 'pending', 0, m.at::timestamptz
              FROM unnest(${metered.id}::text[], ${metered.eventName}::text[], ${metered.quantity}::text[], ${metered.at}::text[])
                   AS m(id, event_name, quantity, at)`);
        }
        const audits = effects.flatMap((e) => (e.audit ? [auditRow(e.audit)] : []));
        if (audits.length > 0) writes.push(tx.insert(auditLog).values(audits));
        const messages = effects.flatMap((e) => outboxMessages(e).map(outboxRow));
        if (messages.length > 0) writes.push(tx.insert(outbox).values(messages), notifyDelivery(tx));
        if (writes.length === 1 && messages.length === 0 && audits.length === 0 && completions.length === 0) {
          // The common batch (no side effects, no outcome to store): the callback returns without
          // waiting for the write, so COMMIT is sent right behind it on the same connection and the
          // locks are released without another event-loop turn of this process. If the write
          // fails, PostgreSQL turns that COMMIT into a rollback; the write's error is seen below.
          sentWithCommit = writes[0]!;
          sentWithCommit.catch(() => {});
          return;
        }
        await Promise.all(writes);
        for (const c of completions) await storeOutcomePg(tx, c);
      });
      if (sentWithCommit) await sentWithCommit;
    } catch (error) {
      for (const p of batch) p.reject(error);
      return;
    }
    settleEach(batch, settled);
  }

  /**
   * Per counter on this node: the reports waiting for a batch, and how many batches are in flight.
   * Two may be: the second waits in PostgreSQL for the first one's locks, so it starts the moment the
   * first commits instead of one event-loop turn later.
   */
  const counters = new Map<string, { waiting: Pending[]; inFlight: number }>();
  const MAX_IN_FLIGHT = 2;

  function pump(key: string): void {
    const c = counters.get(key)!;
    while (c.inFlight < MAX_IN_FLIGHT && c.waiting.length > 0) {
      // Keyed reports go alone; otherwise every waiting report up to the next keyed one goes together.
      let n = 1;
      if (!c.waiting[0]!.record) while (n < c.waiting.length && !c.waiting[n]!.record) n++;
      const batch = c.waiting.splice(0, n);
      c.inFlight++;
      void applyBatch(batch).finally(() => {
        c.inFlight--;
        if (c.inFlight === 0 && c.waiting.length === 0) counters.delete(key);
        else pump(key);
      });
    }
  }

  /** The single-report path inside a caller's transaction (DataStore.transaction): no batching there. */
  async function consumeOne(
    input: ConsumeInput,
    check: Pending["check"],
    record?: Pending["record"],
    effects?: Pending["effects"],
  ): Promise<ConsumeResult> {
    return db.transaction(async (tx): Promise<ConsumeResult> => {
      check(await readLicenseAccess(tx, { id: input.licenseId }, { forUpdate: true }));
      const { licenseId, feature, periodKey, quantity, limit, at } = input;
      const used = await readUsed(tx, licenseId, feature, periodKey, true);
      if (!fits({ used, limit }, quantity)) {
        const marked = await tx
          .insert(quotaExceededMarks)
          .values({ licenseId, feature, periodKey, createdAt: at })
          .onConflictDoNothing()
          .returning({ licenseId: quotaExceededMarks.licenseId });
        if (effects) await writeEffectsPg(tx, effects({ accepted: false, used, firstRefusal: marked.length === 1 }));
        return { accepted: false, used };
      }
      const next = used + quantity;
      await tx
        .insert(usageCounters)
        .values({ licenseId, feature, periodKey, used: next, updatedAt: at })
        .onConflictDoUpdate({
          target: [usageCounters.licenseId, usageCounters.feature, usageCounters.periodKey],
          set: { used: next, updatedAt: at },
        });
      await tx.insert(usageEvents).values({ id: newId(), licenseId, feature, periodKey, quantity, metadata: input.metadata ?? null, createdAt: at });
      if (input.meter) {
        await tx.insert(meterQueue).values({ id: newId(), licenseId, feature, eventName: input.meter, quantity, occurredAt: at, status: "pending", attempts: 0, nextAttemptAt: at });
      }
      const result = { accepted: true, used: next };
      if (effects) await writeEffectsPg(tx, effects({ accepted: true, before: used, used: next }));
      if (record) await storeOutcomePg(tx, record(result));
      return result;
    });
  }

  return {
    consume(input, check, record, effects) {
      if (handle.inTransaction) return consumeOne(input, check, record, effects);
      // Reports of one counter queue on this node while its batches are in flight and go together in
      // the next: on PostgreSQL the license and counter rows are hot (every report of the counter,
      // on every node, takes their locks until COMMIT), so one transaction per waiting batch instead
      // of one per report. A report arriving at an idle counter runs at once, alone.
      return new Promise<ConsumeResult>((resolve, reject) => {
        const key = `${input.licenseId}\u0000${input.feature}\u0000${input.periodKey}`;
        let c = counters.get(key);
        if (!c) counters.set(key, (c = { waiting: [], inFlight: 0 }));
        c.waiting.push({ input, check, record, effects, resolve, reject });
        pump(key);
      });
    },
    used: (licenseId, feature, periodKey) => readUsed(db, licenseId, feature, periodKey),
    async reset(licenseId, refs, effects) {
      return db.transaction(async (tx) => {
        const reset: UsageCounter[] = [];
        for (const r of refs) {
          const [gone] = await tx.delete(usageCounters).where(keyOf(licenseId, r.feature, r.periodKey)).returning();
          if (gone) reset.push(gone);
          await tx
            .delete(quotaExceededMarks)
            .where(and(eq(quotaExceededMarks.licenseId, licenseId), eq(quotaExceededMarks.feature, r.feature), eq(quotaExceededMarks.periodKey, r.periodKey)));
        }
        await writeEffectsPg(tx, effects(reset));
        return reset;
      });
    },
  };
}
