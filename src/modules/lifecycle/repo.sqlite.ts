import { and, asc, eq, gt, inArray, isNotNull, isNull, lte, or, type SQL } from "drizzle-orm";
import { immediate, type DbHandle } from "../../db/client";
import { billingLinks, licenses, lifecycleNotices, plans, products } from "../../db/schema";
import { writeEffects } from "../outbox/write.sqlite";
import type { License } from "../licenses/repo";
import { noticeKey, type LifecycleColumn, type LifecycleRepo } from "./repo";

const COLUMNS = { validUntil: licenses.validUntil, supportUntil: licenses.supportUntil, pastDueSince: licenses.pastDueSince } as const;
const sameInstant = (col: (typeof COLUMNS)[LifecycleColumn], v: Date | null): SQL => (v === null ? isNull(col) : eq(col, v));

export function createLifecycleRepo(handle: DbHandle): LifecycleRepo {
  const { db } = handle;
  return {
    async scan(s, cursor, limit) {
      const col = COLUMNS[s.column];
      const where: SQL[] = [inArray(licenses.status, [...s.statuses]), isNotNull(col), lte(col, s.to)];
      if (s.from) where.push(gt(col, s.from));
      if (cursor) where.push(or(gt(col, cursor.at), and(eq(col, cursor.at), gt(licenses.id, cursor.id)))!);
      const rows = db
        .select({ license: licenses, graceDays: plans.graceDays, productName: products.name, planName: plans.name, subscriptionStatus: billingLinks.subscriptionStatus })
        .from(licenses)
        .innerJoin(plans, eq(plans.id, licenses.planId))
        .innerJoin(products, eq(products.id, licenses.productId))
        // One row per license at most (billing_links is keyed by license_id).
        .leftJoin(billingLinks, eq(billingLinks.licenseId, licenses.id))
        .where(and(...where))
        .orderBy(asc(col), asc(licenses.id))
        .limit(limit)
        .all();
      return rows.map((r) => ({
        license: { ...r.license } as License,
        graceDays: r.graceDays,
        productName: r.productName,
        planName: r.planName,
        subscriptionStatus: r.subscriptionStatus ?? null,
      }));
    },
    async apply(ops, at) {
      return immediate(handle, () =>
        ops.map((op) => {
          if (op.type === "expire") {
            const [row] = db
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
              .returning()
              .all();
            if (!row) return false;
            writeEffects(db, op.effects({ ...row } as License));
            return true;
          }
          const current = db
            .select({ status: licenses.status, at: COLUMNS[op.guardColumn] })
            .from(licenses)
            .where(eq(licenses.id, op.licenseId))
            .get();
          if (!current || !op.statuses.includes(current.status) || current.at?.getTime() !== op.dueFor.getTime()) return false;
          const inserted = db
            .insert(lifecycleNotices)
            .values({ licenseId: op.licenseId, kind: op.kind, dueFor: op.dueFor, createdAt: at })
            .onConflictDoNothing()
            .returning({ id: lifecycleNotices.licenseId })
            .all();
          if (inserted.length === 0) return false;
          writeEffects(db, op.effects);
          return true;
        }),
      );
    },
    async recorded(licenseIds) {
      if (licenseIds.length === 0) return new Set<string>();
      const rows = db
        .select({ licenseId: lifecycleNotices.licenseId, kind: lifecycleNotices.kind, dueFor: lifecycleNotices.dueFor })
        .from(lifecycleNotices)
        .where(inArray(lifecycleNotices.licenseId, [...licenseIds])).all();
      return new Set(rows.map((r) => noticeKey(r.licenseId, r.kind, r.dueFor)));
    },
    async notices(licenseId) {
      return db
        .select({ kind: lifecycleNotices.kind, dueFor: lifecycleNotices.dueFor, createdAt: lifecycleNotices.createdAt })
        .from(lifecycleNotices)
        .where(eq(lifecycleNotices.licenseId, licenseId))
        .orderBy(asc(lifecycleNotices.createdAt), asc(lifecycleNotices.kind))
        .all();
    },
  };
}
