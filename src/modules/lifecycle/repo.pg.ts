import { and, asc, eq, gt, inArray, isNotNull, lte, sql, type SQL } from "drizzle-orm";
import type { PgHandle } from "../../db/pg";
import { isRetryableConflict } from "../../db/serializable.pg";
import { billingLinks, licenses, lifecycleNotices, lifecycleWatermark, plans, products } from "../../db/schema-pg";
import { writeEffectsManyPg } from "../outbox/write.pg";
import type { License } from "../licenses/repo";
import { noticeKey, type LifecycleColumn, type LifecycleCandidate, type LifecycleCursor, type LifecycleOp, type LifecycleRepo, type LifecycleScan } from "./repo";

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
// The settings and the page's query are sent together: postgres.js pipelines what is issued on the
// transaction's connection before an answer is awaited, and PostgreSQL runs it in issue order, so
// the query is planned under the settings and a page costs one round trip less (a pass with nothing
// due is ~37 walks of one page each).

const COLUMNS = { validUntil: licenses.validUntil, supportUntil: licenses.supportUntil, pastDueSince: licenses.pastDueSince } as const;
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

/**
 * One apply transaction as a few set-based statements (not three or four per action: building and
 * sending those cost ~1 ms of this process's CPU per action, measured in process, and at a million
 * licenses the pass took 804 s):
 * 1. every license of the batch, locked FOR UPDATE in id order (so two runs, or two nodes, over the
 *    same licenses queue instead of deadlocking), with the columns the guards compare;
 * 2. the guards decided here, in op order, on those rows as each earlier op leaves them (an expiry
 *    before a notice of the same license: the notice's guard sees it expired);
 * 3. one UPDATE of the expiries that passed (RETURNING the rows their effects describe), one INSERT of
 *    the notices that passed (ON CONFLICT DO NOTHING is still the guard against a notice recorded
 *    meanwhile: only those RETURNING took effect), and one INSERT each of their audit and outbox rows.
 */
async function applySetBased(tx: PgTx, ops: readonly LifecycleOp[], at: Date): Promise<boolean[]> {
  if (ops.length === 0) return [];
  const ids = [...new Set(ops.map((op) => op.licenseId))];
  const locked = await tx
    .select({ id: licenses.id, status: licenses.status, validUntil: licenses.validUntil, supportUntil: licenses.supportUntil, pastDueSince: licenses.pastDueSince })
    .from(licenses)
    .where(inArray(licenses.id, ids))
    .orderBy(asc(sql`${licenses.id} COLLATE "C"`))
    .for("update");
  const current = new Map(locked.map((r) => [r.id, { ...r }]));
  const same = (a: Date | null, b: Date | null) => (a === null ? b === null : b !== null && a.getTime() === b.getTime());
  const passed = ops.map((op) => {
    const row = current.get(op.licenseId);
    if (!row) return false;
    if (op.type === "expire") {
      if (row.status !== op.expect.status || !same(row.validUntil, op.expect.validUntil) || !same(row.pastDueSince, op.expect.pastDueSince)) return false;
      row.status = "expired";
      row.pastDueSince = null;
      return true;
    }
    return op.statuses.includes(row.status) && same(row[op.guardColumn], op.dueFor);
  });
  const expireIds = ops.flatMap((op, i) => (op.type === "expire" && passed[i] ? [op.licenseId] : []));
  const notices = ops.flatMap((op, i) => (op.type === "notice" && passed[i] ? [op] : []));
  const [expired, inserted] = await Promise.all([
    expireIds.length
      ? tx.update(licenses).set({ status: "expired", priorStatus: null, pastDueSince: null, updatedAt: at }).where(inArray(licenses.id, expireIds)).returning()
      : [],
    notices.length
      ? tx
          .insert(lifecycleNotices)
          .values(notices.map((op) => ({ licenseId: op.licenseId, kind: op.kind, dueFor: op.dueFor, createdAt: at })))
          .onConflictDoNothing()
          .returning({ licenseId: lifecycleNotices.licenseId, kind: lifecycleNotices.kind, dueFor: lifecycleNotices.dueFor })
      : [],
  ]);
  const expiredRows = new Map(expired.map((r) => [r.id, r]));
  // A notice inserted takes effect once: the first op of its key claims it (the same notice twice in
  // a batch is one row, ON CONFLICT DO NOTHING within the statement).
  const insertedKeys = new Set(inserted.map((r) => noticeKey(r.licenseId, r.kind, r.dueFor)));
  const claim = (key: string) => insertedKeys.delete(key);
  const done = ops.map((op, i) => (op.type === "expire" ? passed[i]! && expiredRows.has(op.licenseId) : passed[i]! && claim(noticeKey(op.licenseId, op.kind, op.dueFor))));
  await writeEffectsManyPg(
    tx,
    ops.flatMap((op, i) => (done[i] ? [op.type === "expire" ? op.effects({ ...expiredRows.get(op.licenseId)! } as License) : op.effects] : [])),
  );
  return done;
}

export function createLifecycleRepoPg(handle: PgHandle): LifecycleRepo {
  const { db } = handle;
  return {
    applyBatch: APPLY_BATCH,
    async scan(s, cursor, limit) {
      if (s.column === "updatedAt" || s.column === "billingUpdatedAt") {
        const keys = await db.transaction(async (tx) => {
          const [, page] = await Promise.all([tx.execute(sql.raw(WALK_PLANNER_SETTINGS)), lifecycleChangesQueryPg(tx, s, cursor, limit)]);
          return page;
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
        const [, page] = await Promise.all([tx.execute(sql.raw(WALK_PLANNER_SETTINGS)), lifecycleScanQueryPg(tx, { ...s, column }, cursor, limit)]);
        return page;
      });
      const items = rows.map((r) => toCandidate(r, { at: r.license[column] as Date, id: r.license.id }));
      return { items, next: items.length === limit ? items[items.length - 1]!.position : null };
    },
    async apply(ops, at) {
      const once = () => db.transaction((tx) => applySetBased(tx, ops, at));
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
