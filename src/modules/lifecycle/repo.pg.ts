import { and, asc, eq, gt, inArray, isNotNull, isNull, lte, sql, type SQL } from "drizzle-orm";
import type { PgHandle } from "../../db/pg";
import { isRetryableConflict } from "../../db/serializable.pg";
import { billingLinks, licenses, lifecycleNotices, lifecycleWatermark, plans, products } from "../../db/schema-pg";
import { writeEffectsPg } from "../outbox/write.pg";
import type { License } from "../licenses/repo";
import { noticeKey, type LifecycleColumn, type LifecycleCandidate, type LifecycleCursor, type LifecycleRepo, type LifecycleScan } from "./repo";

type PgDb = PgHandle["db"];
type PgTx = Parameters<Parameters<PgDb["transaction"]>[0]>[0];

/**
 * Planner settings for every walk's page, in its own transaction (SET LOCAL). Where PostgreSQL
 * expects a range to be small (a narrow reminder window, the changes since the last pass, or any
 * range on a small table) it reads it through a bitmap scan and sorts it; when its statistics
 * underestimate the range (after a bulk import or a mass renewal, before autovacuum's next ANALYZE)
 * every page would sort all that is left. Each walk's index matches its equality, range and order
 * exactly, so the ordered index scan is never much worse than the sort, and with sorting off (full
 * and incremental: a status-prefixed index of another walk would otherwise be read and re-sorted) it is
 * the plan whatever the estimate. The contract test EXPLAINs every walk under these settings.
 */
export const WALK_PLANNER_SETTINGS = "SET LOCAL enable_sort = off; SET LOCAL enable_incremental_sort = off";

const COLUMNS = { validUntil: licenses.validUntil, supportUntil: licenses.supportUntil, pastDueSince: licenses.pastDueSince } as const;
const sameInstant = (col: (typeof COLUMNS)[LifecycleColumn], v: Date | null): SQL => (v === null ? isNull(col) : eq(col, v));
const WATERMARK = "lifecycle";

/**
 * Actions per apply transaction on PostgreSQL: a page's worth. Measured at 100k licenses (25k
 * actions) on a shared machine: transactions of 10 took 23.6 s in apply, nearly all of it commits.
 */
const APPLY_BATCH = 100;

/** Attempts of one batch: a deadlock between two nodes' batches rolls one back; it runs again. */
const APPLY_ATTEMPTS = 5;

/**
 * The statement of one page of a walk (exported for the contract test that EXPLAINs it): one index
 * range scan in index order, no sort (see repo.sqlite.ts for the walks). Ids compare bytewise on
 * SQLite; COLLATE "C" gives PostgreSQL the same order, and the indexes carry the id in COLLATE "C"
 * so that order is theirs (an index in the default collation cannot serve it: the plan would sort).
 * The cursor is a row comparison, which PostgreSQL uses as the start of the index range.
 */
export function lifecycleScanQueryPg(db: PgDb | PgTx, s: LifecycleScan & { column: LifecycleColumn }, cursor: LifecycleCursor | null, limit: number) {
  const col = COLUMNS[s.column];
  if (s.status) {
    // One status: the range is written only as row comparisons over (status, date[, id]), the
    // columns of licenses_status_<date>_idx, and ordered by them. No other index can use them (the
    // admin list's licenses_valid_until_idx would otherwise be chosen: it reads every license whose
    // date is in range, expired ones included, and filters them), so the planner takes that index
    // whatever its statistics say. Rows with the date NULL compare as unknown and never match.
    const status = s.status;
    const lower = cursor
      ? sql`(${licenses.status}, ${col}, ${orderId(licenses.id)}) > (${status}, ${sql.param(cursor.at, col)}, ${cursor.id})`
      : sql`(${licenses.status}, ${col}) ${s.from ? sql`>` : sql`>=`} (${status}, ${sql.param(s.from ?? WALK_FLOOR, col)})`;
    const upper = sql`(${licenses.status}, ${col}) <= (${status}, ${sql.param(s.to ?? WALK_CEILING, col)})`;
    return candidates(db)
      .where(and(lower, upper))
      .orderBy(asc(licenses.status), asc(col), asc(orderId(licenses.id)))
      .limit(limit);
  }
  const where: SQL[] = [isNotNull(col)];
  if (s.from) where.push(gt(col, s.from));
  if (s.to) where.push(lte(col, s.to));
  if (cursor) where.push(sql`(${col}, ${orderId(licenses.id)}) > (${sql.param(cursor.at, col)}, ${cursor.id})`);
  return candidates(db)
    .where(and(...where))
    .orderBy(asc(col), asc(orderId(licenses.id)))
    .limit(limit);
}

/** The bounds of a walk with no lower or upper date: before and after any date a license can hold. */
const WALK_FLOOR = new Date("0001-01-01T00:00:00.000Z");
const WALK_CEILING = new Date("9999-12-31T23:59:59.999Z");

/**
 * The change walks' page (exported for the same test): keys only, from the one index that holds
 * them (licenses_status_updated_idx, one status at a time; billing_links_updated_idx), so the range is read in index order
 * whatever the planner thinks of its size; the licenses are then read by primary key
 * (lifecycleRowsQueryPg).
 */
export function lifecycleChangesQueryPg(db: PgDb | PgTx, s: LifecycleScan, cursor: LifecycleCursor | null, limit: number) {
  const [table, col, id] = s.column === "billingUpdatedAt" ? ([billingLinks, billingLinks.updatedAt, billingLinks.licenseId] as const) : ([licenses, licenses.updatedAt, licenses.id] as const);
  const where: SQL[] = [];
  if (s.column === "updatedAt" && s.status) where.push(eq(licenses.status, s.status));
  if (s.from) where.push(gt(col, s.from));
  if (s.to) where.push(lte(col, s.to));
  if (cursor) where.push(sql`(${col}, ${orderId(id)}) > (${sql.param(cursor.at, col)}, ${cursor.id})`);
  return db
    .select({ at: col, id })
    .from(table)
    .where(and(...where))
    .orderBy(asc(col), asc(orderId(id)))
    .limit(limit);
}

/** The candidates with these ids, by primary key. */
export function lifecycleRowsQueryPg(db: PgDb, ids: readonly string[]) {
  return candidates(db).where(inArray(licenses.id, [...ids]));
}

/** A license with what its emails show and its billing link's subscription status. */
function candidates(db: PgDb | PgTx) {
  return (
    db
      .select({ license: licenses, graceDays: plans.graceDays, productName: products.name, planName: plans.name, subscriptionStatus: billingLinks.subscriptionStatus })
      .from(licenses)
      .innerJoin(plans, eq(plans.id, licenses.planId))
      .innerJoin(products, eq(products.id, licenses.productId))
      // One row per license at most (billing_links is keyed by license_id).
      .leftJoin(billingLinks, eq(billingLinks.licenseId, licenses.id))
      .$dynamic()
  );
}

const orderId = (c: typeof licenses.id | typeof billingLinks.licenseId) => sql`${c} COLLATE "C"`;
type Row = { license: unknown; graceDays: number; productName: string; planName: string; subscriptionStatus: string | null };
const toCandidate = (r: Row, position: LifecycleCursor): LifecycleCandidate => ({
  license: { ...(r.license as License) },
  graceDays: r.graceDays,
  productName: r.productName,
  planName: r.planName,
  subscriptionStatus: r.subscriptionStatus ?? null,
  position,
});

export function createLifecycleRepoPg(handle: PgHandle): LifecycleRepo {
  const { db } = handle;
  return {
    applyBatch: APPLY_BATCH,
    async scan(s, cursor, limit) {
      if (s.column === "updatedAt" || s.column === "billingUpdatedAt") {
        const keys = await db.transaction(async (tx) => {
          await tx.execute(sql.raw(WALK_PLANNER_SETTINGS));
          return lifecycleChangesQueryPg(tx, s, cursor, limit);
        });
        const next = keys.length === limit ? { at: keys[keys.length - 1]!.at as Date, id: keys[keys.length - 1]!.id } : null;
        if (keys.length === 0) return { items: [], next };
        const rows = new Map((await lifecycleRowsQueryPg(db, keys.map((k) => k.id))).map((r) => [r.license.id, r]));
        // A license deleted in between has no row: skipped (the cursor still moves past its key).
        const items = keys.flatMap((k) => {
          const r = rows.get(k.id);
          return r ? [toCandidate(r, { at: k.at as Date, id: k.id })] : [];
        });
        return { items, next };
      }
      const column = s.column;
      const rows = await db.transaction(async (tx) => {
        await tx.execute(sql.raw(WALK_PLANNER_SETTINGS));
        return lifecycleScanQueryPg(tx, { ...s, column }, cursor, limit);
      });
      const items = rows.map((r) => toCandidate(r, { at: r.license[column] as Date, id: r.license.id }));
      return { items, next: items.length === limit ? items[items.length - 1]!.position : null };
    },
    async apply(ops, at) {
      const once = () =>
        db.transaction(async (tx) => {
          // Three phases, each sent at once: postgres.js pipelines the statements issued on the
          // transaction's connection before an answer is awaited, and PostgreSQL runs them in issue
          // order. So a batch costs three or four round trips instead of three per action (on a
          // local server that saved little; across a network a round trip outweighs the statement),
          // and a later action still sees an earlier one's write (an expiry before a notice of the
          // same license: the notice's guard reads it expired).
          // 1. The guards. An expiry is a conditional update; under READ COMMITTED a racing run's
          //    update of the same row makes it wait, then re-check against the committed row and
          //    update nothing. A notice reads the license FOR SHARE: a renewal or status change
          //    committing between this read and the commit waits for it (or this waits for it), so a
          //    notice is never sent for a date just replaced.
          const guards = await Promise.all(
            ops.map((op) =>
              op.type === "expire"
                ? tx
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
                : tx
                    .select({ status: licenses.status, at: COLUMNS[op.guardColumn] })
                    .from(licenses)
                    .where(eq(licenses.id, op.licenseId))
                    .for("share"),
            ),
          );
          // 2. The notices whose license still matches: the insert is the guard (a racing run's
          //    uncommitted row makes it wait, and then do nothing once that run commits).
          const inserted = await Promise.all(
            ops.map((op, i) => {
              if (op.type !== "notice") return null;
              const current = guards[i]![0] as { status: License["status"]; at: Date | null } | undefined;
              if (!current || !op.statuses.includes(current.status) || current.at?.getTime() !== op.dueFor.getTime()) return null;
              return tx
                .insert(lifecycleNotices)
                .values({ licenseId: op.licenseId, kind: op.kind, dueFor: op.dueFor, createdAt: at })
                .onConflictDoNothing()
                .returning({ id: lifecycleNotices.licenseId });
            }),
          );
          // 3. The effects of what took effect, in the same transaction.
          const done = ops.map((op, i) => (op.type === "expire" ? guards[i]!.length > 0 : (inserted[i]?.length ?? 0) > 0));
          await Promise.all(
            ops.map((op, i) => {
              if (!done[i]) return null;
              return writeEffectsPg(tx, op.type === "expire" ? op.effects({ ...(guards[i]![0] as object) } as License) : op.effects);
            }),
          );
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
