import { and, eq, sql } from "drizzle-orm";
import { BUSY_TIMEOUT_MS, immediate, lazyStatement, writeOrBusy, type DbHandle } from "../../db/client";
import { quotaExceededMarks, usageCounters } from "../../db/schema";
import { writeEffects } from "../outbox/write.sqlite";
import { createLicenseAccessReaders } from "../license-api/repo.sqlite";
import { storeOutcome } from "../idempotency/repo.sqlite";
import { newId } from "../../shared/ids";
import { fits } from "../entitlements/quota";
import type { ConsumeResult, UsageCounter, UsageRepo } from "./repo";
import { settleEach, type Outcome, type WaitingReport } from "./batch";

/** Reports per transaction at most: bounds how long one batch holds the write lock. */
const MAX_BATCH = 256;
/** The longest pause between two tries of a batch while another process holds the write lock. */
const LOCK_RETRY_MAX_MS = 50;

export function createUsageRepo(handle: DbHandle): UsageRepo {
  const { db } = handle;
  const access = createLicenseAccessReaders(handle);
  const key = { licenseId: sql.placeholder("licenseId"), feature: sql.placeholder("feature"), periodKey: sql.placeholder("periodKey") };
  const counter = lazyStatement(() =>
    db
      .select()
      .from(usageCounters)
      .where(and(eq(usageCounters.licenseId, key.licenseId), eq(usageCounters.feature, key.feature), eq(usageCounters.periodKey, key.periodKey)))
      .prepare(),
  );
  const get = (licenseId: string, feature: string, periodKey: string): UsageCounter | null =>
    counter().get({ licenseId, feature, periodKey }) ?? null;
  // The two writes of every accepted report, prepared once: built by the query builder on each call
  // they cost most of a usage request (measured: 99 µs -> see the contention bench).
  const bump = lazyStatement(() =>
    handle.sqlite.prepare<unknown, [string, string, string, number, number]>(
      `INSERT INTO usage_counters (license_id, feature, period_key, used, updated_at) VALUES (?1, ?2, ?3, ?4, ?5)
       ON CONFLICT (license_id, feature, period_key) DO UPDATE SET used = excluded.used, updated_at = excluded.updated_at`,
    ),
  );
  // The first refusal of a period leaves a mark; only the report whose insert took is the first.
  const markExceeded = lazyStatement(() =>
    handle.sqlite.prepare<{ license_id: string }, [string, string, string, number]>(
      `INSERT INTO quota_exceeded_marks (license_id, feature, period_key, created_at) VALUES (?1, ?2, ?3, ?4)
       ON CONFLICT DO NOTHING RETURNING license_id`,
    ),
  );
  const event = lazyStatement(() =>
    handle.sqlite.prepare<unknown, [string, string, string, string, number, string | null, number]>(
      `INSERT INTO usage_events (id, license_id, feature, period_key, quantity, metadata, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)`,
    ),
  );
  // Metered features only (docs/payments.md "Metered billing"): the meter event to send to Stripe.
  const queueMeterEvent = lazyStatement(() =>
    handle.sqlite.prepare<unknown, [string, string, string, string, number, number]>(
      `INSERT INTO meter_queue (id, license_id, feature, event_name, quantity, occurred_at, status, attempts, next_attempt_at)
       VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'pending', 0, ?6)`,
    ),
  );

  /** One report, decided as if alone; runs inside a write transaction (its own, or a batch's savepoint). */
  const one = ({ input, check, record, effects }: Omit<WaitingReport, "resolve" | "reject">): ConsumeResult => {
    // Re-read inside the write transaction: a revoke or suspend that committed after the
    // caller's lookup must win over this report (same rule as activation).
    check(access.findById(input.licenseId));
    const used = get(input.licenseId, input.feature, input.periodKey)?.used ?? 0;
    const at = input.at.getTime();
    if (!fits({ used, limit: input.limit }, input.quantity)) {
      const firstRefusal = markExceeded().get(input.licenseId, input.feature, input.periodKey, at) !== null;
      if (effects) writeEffects(db, effects({ accepted: false, used, firstRefusal }));
      return { accepted: false, used };
    }
    const next = used + input.quantity;
    bump().run(input.licenseId, input.feature, input.periodKey, next, at);
    event().run(newId(), input.licenseId, input.feature, input.periodKey, input.quantity, input.metadata == null ? null : JSON.stringify(input.metadata), at);
    if (input.meter) queueMeterEvent().run(newId(), input.licenseId, input.feature, input.meter, input.quantity, at);
    const result = { accepted: true, used: next };
    if (effects) writeEffects(db, effects({ accepted: true, before: used, used: next }));
    if (record) storeOutcome(handle, record(result));
    return result;
  };

  // Group commit. Every report used to be its own IMMEDIATE transaction, and measured under the
  // contention bench's load the transaction took about 40 of a usage request's 85 µs of CPU, most
  // of it taking the write lock and committing. Reports that arrive in the same turn of the event
  // loop now share one transaction: each runs in a savepoint of its own, in arrival order, exactly
  // as it would alone (a refusing check or a lost Idempotency claim undoes that report only), and
  // every promise settles after the COMMIT, so a report is acknowledged only once it is durable.
  // Across processes nothing changes: a batch holds SQLite's write lock like a single report did.
  const waiting: WaitingReport[] = [];
  let scheduled = false;
  /** How long the head batch has waited for another process's write lock (the sum of its retry delays). */
  let lockWaitMs = 0;
  const schedule = (delayMs: number) => {
    if (scheduled) return;
    scheduled = true;
    if (delayMs === 0) setImmediate(flush);
    else setTimeout(flush, delayMs);
  };
  function flush(): void {
    scheduled = false;
    // A DataStore.transaction holds the connection across awaits: a batch started now would become
    // part of it (the rate limiter's flush waits the same way). Try again shortly.
    let busy: boolean;
    try {
      busy = handle.sqlite.inTransaction;
    } catch (error) {
      // The database was closed under the waiting reports (this runs from a timer: never throw).
      for (const p of waiting.splice(0)) p.reject(error);
      return;
    }
    if (busy) return schedule(1);
    const batch = waiting.splice(0, MAX_BATCH);
    const outcomes: Outcome[] = [];
    let locked: Error | null;
    try {
      // Without waiting for another process's write lock (bun:sqlite would wait synchronously, with
      // every request of this process on hold): while it is held, the batch waits here instead,
      // asynchronously, retried with a growing delay, for as long as busy_timeout would have waited.
      locked = writeOrBusy(handle.sqlite, () =>
        immediate(handle, () => {
          for (const p of batch) {
            try {
              outcomes.push({ ok: savepoint(() => one(p)) });
            } catch (error) {
              outcomes.push({ error });
            }
          }
        }),
      );
    } catch (error) {
      // BEGIN or COMMIT failed otherwise (the disk, a closed database): nothing of the batch was written.
      for (const p of batch) p.reject(error);
      if (waiting.length > 0) schedule(0);
      return;
    }
    if (locked) {
      if (lockWaitMs >= BUSY_TIMEOUT_MS) {
        // As long as busy_timeout: answered as the database being unavailable (503), as before.
        lockWaitMs = 0;
        for (const p of batch) p.reject(locked);
        if (waiting.length > 0) schedule(0);
        return;
      }
      waiting.unshift(...batch);
      const delay = Math.min(LOCK_RETRY_MAX_MS, Math.max(1, lockWaitMs));
      lockWaitMs += delay;
      schedule(delay);
      return;
    }
    lockWaitMs = 0;
    if (waiting.length > 0) schedule(0);
    settleEach(batch, outcomes);
  }
  /** A nested bun:sqlite transaction is a SAVEPOINT: rolled back alone when `fn` throws. */
  let nested: ((fn: () => ConsumeResult) => ConsumeResult) | null = null;
  const savepoint = (fn: () => ConsumeResult): ConsumeResult => (nested ??= handle.sqlite.transaction((f: () => ConsumeResult) => f()))(fn);

  return {
    async consume(input, check, record, effects) {
      // Inside a caller's DataStore.transaction (ungated repositories): part of that transaction,
      // now, in a savepoint so that a report that throws leaves nothing behind in it.
      if (handle.sqlite.inTransaction) return savepoint(() => one({ input, check, record, effects }));
      return new Promise<ConsumeResult>((resolve, reject) => {
        waiting.push({ input, check, record, effects, resolve, reject });
        schedule(0);
      });
    },
    async used(licenseId, feature, periodKey) {
      return get(licenseId, feature, periodKey)?.used ?? 0;
    },
    async reset(licenseId, refs, effects) {
      return immediate(handle, () => {
        const reset: UsageCounter[] = [];
        for (const r of refs) {
          const [gone] = db
            .delete(usageCounters)
            .where(and(eq(usageCounters.licenseId, licenseId), eq(usageCounters.feature, r.feature), eq(usageCounters.periodKey, r.periodKey)))
            .returning()
            .all();
          if (gone) reset.push(gone);
          db.delete(quotaExceededMarks)
            .where(and(eq(quotaExceededMarks.licenseId, licenseId), eq(quotaExceededMarks.feature, r.feature), eq(quotaExceededMarks.periodKey, r.periodKey)))
            .run();
        }
        writeEffects(db, effects(reset));
        return reset;
      });
    },
  };
}
