import { and, asc, eq, gt, inArray, isNotNull, isNull, lte, sql, type SQL } from "drizzle-orm";
import type { PgHandle } from "../../db/pg";
import { isRetryableConflict } from "../../db/serializable.pg";
import { billingLinks, licenses, lifecycleNotices, lifecycleWatermark, plans, products } from "../../db/schema-pg";
import { writeEffectsPg } from "../outbox/write.pg";
import type { License } from "../licenses/repo";
import { noticeKey, type LifecycleColumn, type LifecycleCursor, type LifecycleRepo, type LifecycleScan } from "./repo";

type PgDb = PgHandle["db"];

const COLUMNS = { validUntil: licenses.validUntil, supportUntil: licenses.supportUntil, pastDueSince: licenses.pastDueSince } as const;
const WALK_COLUMNS = { ...COLUMNS, updatedAt: licenses.updatedAt, billingUpdatedAt: billingLinks.updatedAt } as const;
const sameInstant = (col: (typeof COLUMNS)[LifecycleColumn], v: Date | null): SQL => (v === null ? isNull(col) : eq(col, v));
const WATERMARK = "lifecycle";

/** Attempts of one batch: a deadlock between two nodes' batches rolls one back; it runs again. */
const APPLY_ATTEMPTS = 5;

/**
 * The statement of one page of a walk (exported for the contract test that EXPLAINs it): one index
 * range scan in index order, no sort (see repo.sqlite.ts for the walks). Ids compare bytewise on
 * SQLite; COLLATE "C" gives PostgreSQL the same order, and the indexes carry the id in COLLATE "C"
 * so that order is theirs (an index in the default collation cannot serve it: the plan would sort).
 * The cursor is a row comparison, which PostgreSQL uses as the start of the index range.
 */
export function lifecycleScanQueryPg(db: PgDb, s: LifecycleScan, cursor: LifecycleCursor | null, limit: number) {
  const col = WALK_COLUMNS[s.column];
  const idC = sql`${s.column === "billingUpdatedAt" ? billingLinks.licenseId : licenses.id} COLLATE "C"`;
  const where: SQL[] = [isNotNull(col)];
  if (s.status) where.push(eq(licenses.status, s.status));
  if (s.from) where.push(gt(col, s.from));
  if (s.to) where.push(lte(col, s.to));
  if (cursor) where.push(sql`(${col}, ${idC}) > (${sql.param(cursor.at, col)}, ${cursor.id})`);
  const joinBilling = eq(billingLinks.licenseId, licenses.id);
  const base = db
    .select({
      license: licenses,
      graceDays: plans.graceDays,
      productName: products.name,
      planName: plans.name,
      subscriptionStatus: billingLinks.subscriptionStatus,
      walkAt: col,
    })
    .from(licenses)
    .innerJoin(plans, eq(plans.id, licenses.planId))
    .innerJoin(products, eq(products.id, licenses.productId))
    .$dynamic();
  // One row per license at most (billing_links is keyed by license_id).
  const joined = s.column === "billingUpdatedAt" ? base.innerJoin(billingLinks, joinBilling) : base.leftJoin(billingLinks, joinBilling);
  return joined
    .where(and(...where))
    .orderBy(asc(col), asc(idC))
    .limit(limit);
}

export function createLifecycleRepoPg(handle: PgHandle): LifecycleRepo {
  const { db } = handle;
  return {
    async scan(s, cursor, limit) {
      const rows = await lifecycleScanQueryPg(db, s, cursor, limit);
      return rows.map((r) => ({
        license: { ...r.license } as License,
        graceDays: r.graceDays,
        productName: r.productName,
        planName: r.planName,
        subscriptionStatus: r.subscriptionStatus ?? null,
        position: { at: r.walkAt as Date, id: r.license.id },
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
    async watermark() {
      const [row] = await db.select().from(lifecycleWatermark).where(eq(lifecycleWatermark.name, WATERMARK));
      return row ? { passedAt: row.passedAt, basis: row.basis } : null;
    },
    async saveWatermark(w) {
      await db
        .insert(lifecycleWatermark)
        .values({ name: WATERMARK, passedAt: w.passedAt, basis: w.basis })
        .onConflictDoUpdate({ target: lifecycleWatermark.name, set: { passedAt: w.passedAt, basis: w.basis }, setWhere: lte(lifecycleWatermark.passedAt, w.passedAt) });
    },
    // Autovacuum analyzes the tables the pass changes; nothing to do here.
    async optimize() {},
  };
}
