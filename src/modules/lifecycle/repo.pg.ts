import { and, asc, eq, gt, inArray, isNotNull, isNull, lte, or, sql, type SQL } from "drizzle-orm";
import type { PgHandle } from "../../db/pg";
import { isRetryableConflict } from "../../db/serializable.pg";
import { billingLinks, licenses, lifecycleNotices, plans, products } from "../../db/schema-pg";
import { writeEffectsPg } from "../outbox/write.pg";
import type { License } from "../licenses/repo";
import { noticeKey, type LifecycleColumn, type LifecycleRepo } from "./repo";

const COLUMNS = { validUntil: licenses.validUntil, supportUntil: licenses.supportUntil, pastDueSince: licenses.pastDueSince } as const;
const sameInstant = (col: (typeof COLUMNS)[LifecycleColumn], v: Date | null): SQL => (v === null ? isNull(col) : eq(col, v));
/** Ids compare bytewise on SQLite; COLLATE "C" gives PostgreSQL the same order (and keyset). */
const idC = sql`${licenses.id} COLLATE "C"`;

/** Attempts of one batch: a deadlock between two nodes' batches rolls one back; it runs again. */
const APPLY_ATTEMPTS = 5;

export function createLifecycleRepoPg(handle: PgHandle): LifecycleRepo {
  const { db } = handle;
  return {
    async scan(s, cursor, limit) {
      const col = COLUMNS[s.column];
      const where: SQL[] = [inArray(licenses.status, [...s.statuses]), isNotNull(col), lte(col, s.to)];
      if (s.from) where.push(gt(col, s.from));
      if (cursor) where.push(or(gt(col, cursor.at), and(eq(col, cursor.at), sql`${idC} > ${cursor.id}`))!);
      const rows = await db
        .select({ license: licenses, graceDays: plans.graceDays, productName: products.name, planName: plans.name, subscriptionStatus: billingLinks.subscriptionStatus })
        .from(licenses)
        .innerJoin(plans, eq(plans.id, licenses.planId))
        .innerJoin(products, eq(products.id, licenses.productId))
        // One row per license at most (billing_links is keyed by license_id).
        .leftJoin(billingLinks, eq(billingLinks.licenseId, licenses.id))
        .where(and(...where))
        .orderBy(asc(col), asc(idC))
        .limit(limit);
      return rows.map((r) => ({
        license: { ...r.license } as License,
        graceDays: r.graceDays,
        productName: r.productName,
        planName: r.planName,
        subscriptionStatus: r.subscriptionStatus ?? null,
      }));
    },
    async apply(ops, at) {
      const once = () =>
        db.transaction(async (tx) => {
          const done: boolean[] = [];
          for (const op of ops) {
            if (op.type === "expire") {
              // READ COMMITTED: a racing run's update of the same row makes this one wait, then
              // re-check the condition against the committed row and update nothing.
              const [row] = await tx
                .update(licenses)
                .set({ status: "expired", priorStatus: null, pastDueSince: null, updatedAt: at })
                .where(
                  and(
                    eq(licenses.id, op.licenseId),
                    eq(licenses.status, op.expect.status),
                    sameInstant(licenses.validUntil, op.expect.validUntil),
                    sameInstant(licenses.pastDueSince, op.expect.pastDueSince),
                  ),
                )
                .returning();
              if (row) await writeEffectsPg(tx, op.effects({ ...row } as License));
              done.push(Boolean(row));
              continue;
            }
            // FOR SHARE: a renewal or status change committing between this read and the commit
            // waits for it (or this waits for it), so a notice is never sent for a date just replaced.
            const [current] = await tx
              .select({ status: licenses.status, at: COLUMNS[op.guardColumn] })
              .from(licenses)
              .where(eq(licenses.id, op.licenseId))
              .for("share");
            if (!current || !op.statuses.includes(current.status) || current.at?.getTime() !== op.dueFor.getTime()) {
              done.push(false);
              continue;
            }
            // The insert is the guard: a racing run's uncommitted row makes this wait, and then do
            // nothing once that run commits.
            const inserted = await tx
              .insert(lifecycleNotices)
              .values({ licenseId: op.licenseId, kind: op.kind, dueFor: op.dueFor, createdAt: at })
              .onConflictDoNothing()
              .returning({ id: lifecycleNotices.licenseId });
            if (inserted.length > 0) await writeEffectsPg(tx, op.effects);
            done.push(inserted.length > 0);
          }
          return done;
        });
      // Inside DataStore.transaction a retry is impossible (the outer transaction is aborted).
      if (handle.inTransaction) return once();
      for (let attempt = 1; ; attempt++) {
        try {
          return await once();
        } catch (e) {
          if (attempt >= APPLY_ATTEMPTS || !isRetryableConflict(e)) throw e;
          await Bun.sleep(Math.random() * 20 * attempt);
        }
      }
    },
    async recorded(licenseIds) {
      if (licenseIds.length === 0) return new Set<string>();
      const rows = await db
        .select({ licenseId: lifecycleNotices.licenseId, kind: lifecycleNotices.kind, dueFor: lifecycleNotices.dueFor })
        .from(lifecycleNotices)
        .where(inArray(lifecycleNotices.licenseId, [...licenseIds]));
      return new Set(rows.map((r) => noticeKey(r.licenseId, r.kind, r.dueFor)));
    },
    async notices(licenseId) {
      return db
        .select({ kind: lifecycleNotices.kind, dueFor: lifecycleNotices.dueFor, createdAt: lifecycleNotices.createdAt })
        .from(lifecycleNotices)
        .where(eq(lifecycleNotices.licenseId, licenseId))
        .orderBy(asc(lifecycleNotices.createdAt), sql`${lifecycleNotices.kind} COLLATE "C"`);
    },
  };
}
