import { and, asc, eq, gt, inArray, isNotNull, lte, sql, type SQL } from "drizzle-orm";
import { immediate, lazyStatement, type Db, type DbHandle } from "../../db/client";
import { billingLinks, licenses, lifecycleNotices, lifecycleWatermark, plans, products } from "../../db/schema";
import { writeEffects } from "../outbox/write.sqlite";
import type { License } from "../licenses/repo";
import { LIFECYCLE_APPLY_SIZE } from "./domain";
import { noticeKey, type LifecycleColumn, type LifecycleCandidate, type LifecycleCursor, type LifecycleRepo, type LifecycleScan } from "./repo";

const COLUMNS = { validUntil: licenses.validUntil, supportUntil: licenses.supportUntil, pastDueSince: licenses.pastDueSince } as const;
const WATERMARK = "lifecycle";

/**
 * The statement of one page of a walk (exported for the contract test that EXPLAINs it).
 *
 * Each page is ONE index range scan in index order, so it costs its page and never sorts: a date
 * walk pins one status (`status = ?`, the leading column of licenses_status_<date>_idx) and ranges
 * over (date, id); the change walks range over licenses_status_updated_idx / billing_links_updated_idx. The
 * cursor is a row-value comparison, which SQLite turns into the start of the range (an OR of
 * "date > a, or date = a and id > b" would re-read every earlier row at the cursor's instant).
 * Without statistics the planner already has only these indexes to serve the terms (the single-
 * column status index and the date-only ones were replaced), and with statistics an equality plus a
 * range on one index beats any other; the contract test checks both plans.
 */
export function lifecycleScanQuery(db: Db, s: LifecycleScan & { column: LifecycleColumn }, cursor: LifecycleCursor | null, limit: number) {
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
 * (lifecycleRowsQuery).
 */
export function lifecycleChangesQuery(db: Db, s: LifecycleScan, cursor: LifecycleCursor | null, limit: number) {
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
export function lifecycleRowsQuery(db: Db, ids: readonly string[]) {
  return candidates(db).where(inArray(licenses.id, [...ids]));
}

/** A license with what its emails show and its billing link's subscription status. */
function candidates(db: Db) {
  return (
    db
      .select({ license: licenses, graceDays: plans.graceDays, productName: products.name, planName: plans.name, subscriptionStatus: billingLinks.subscriptionStatus })
      .from(licenses)
      // `+` keeps the licenses side of each join off the indexes: with a million licenses' statistics
      // SQLite otherwise drove from products (or plans) into licenses_product_status_valid_until_idx,
      // one range per product, and sorted every page (0.9 s a page); licenses must be the outer loop,
      // read in its walk's index order.
      .innerJoin(plans, sql`${plans.id} = +${licenses.planId}`)
      .innerJoin(products, sql`${products.id} = +${licenses.productId}`)
      // One row per license at most (billing_links is keyed by license_id).
      .leftJoin(billingLinks, eq(billingLinks.licenseId, licenses.id))
      .$dynamic()
  );
}

const orderId = (c: typeof licenses.id | typeof billingLinks.licenseId) => c;
type Row = { license: unknown; graceDays: number; productName: string; planName: string; subscriptionStatus: string | null };
const toCandidate = (r: Row, position: LifecycleCursor): LifecycleCandidate => ({
  license: { ...(r.license as License) },
  graceDays: r.graceDays,
  productName: r.productName,
  planName: r.planName,
  subscriptionStatus: r.subscriptionStatus ?? null,
  position,
});

export function createLifecycleRepo(handle: DbHandle): LifecycleRepo {
  const { db } = handle;
  // apply's statements, prepared on first use and reused (a pass runs them once per action; building
  // each through the query builder cost more than running it). Instants are bound as epoch ms, the
  // columns' storage; `IS` compares NULL with NULL, so one statement serves a date that is unset.
  const statements = lazyStatement(() => {
    const p = (name: string) => sql`${sql.placeholder(name)}`;
    const guard = (column: LifecycleColumn) =>
      db.select({ status: licenses.status, at: COLUMNS[column] }).from(licenses).where(eq(licenses.id, p("id"))).prepare();
    return {
      expire: db
        .update(licenses)
        .set({ status: "expired", priorStatus: null, pastDueSince: null, updatedAt: p("at") })
        .where(
          and(
            eq(licenses.id, p("id")),
            eq(licenses.status, p("status")),
            sql`${licenses.validUntil} IS ${p("validUntil")}`,
            sql`${licenses.pastDueSince} IS ${p("pastDueSince")}`,
          ),
        )
        .returning()
        .prepare(),
      guard: { validUntil: guard("validUntil"), supportUntil: guard("supportUntil"), pastDueSince: guard("pastDueSince") },
      notice: db
        .insert(lifecycleNotices)
        .values({ licenseId: p("licenseId"), kind: p("kind"), dueFor: p("dueFor"), createdAt: p("at") })
        .onConflictDoNothing()
        .returning({ id: lifecycleNotices.licenseId })
        .prepare(),
    };
  });
  return {
    applyBatch: LIFECYCLE_APPLY_SIZE,
    async scan(s, cursor, limit) {
      if (s.column === "updatedAt" || s.column === "billingUpdatedAt") {
        const keys = lifecycleChangesQuery(db, s, cursor, limit).all();
        const next = keys.length === limit ? { at: keys[keys.length - 1]!.at as Date, id: keys[keys.length - 1]!.id } : null;
        if (keys.length === 0) return { items: [], next };
        const rows = new Map((lifecycleRowsQuery(db, keys.map((k) => k.id)).all()).map((r) => [r.license.id, r]));
        // A license deleted in between has no row: skipped (the cursor still moves past its key).
        const items = keys.flatMap((k) => {
          const r = rows.get(k.id);
          return r ? [toCandidate(r, { at: k.at as Date, id: k.id })] : [];
        });
        return { items, next };
      }
      const rows = lifecycleScanQuery(db, { ...s, column: s.column }, cursor, limit).all();
      const column = s.column;
      const items = rows.map((r) => toCandidate(r, { at: r.license[column] as Date, id: r.license.id }));
      return { items, next: items.length === limit ? items[items.length - 1]!.position : null };
    },
    async apply(ops, at) {
      // A background writer: waits its turn (the checkpoint thread restarting the WAL; on the lifecycle
      // thread, the serving thread's turn: db/background-gate.sqlite.ts).
      const st = statements();
      return handle.backgroundGate.write(() => immediate(handle, () =>
        ops.map((op) => {
          if (op.type === "expire") {
            const [row] = st.expire.all({
              id: op.licenseId,
              status: op.expect.status,
              validUntil: op.expect.validUntil?.getTime() ?? null,
              pastDueSince: op.expect.pastDueSince?.getTime() ?? null,
              at: at.getTime(),
            });
            if (!row) return false;
            writeEffects(db, op.effects({ ...row } as License));
            return true;
          }
          const current = st.guard[op.guardColumn].get({ id: op.licenseId });
          if (!current || !op.statuses.includes(current.status) || current.at?.getTime() !== op.dueFor.getTime()) return false;
          const inserted = st.notice.all({ licenseId: op.licenseId, kind: op.kind, dueFor: op.dueFor.getTime(), at: at.getTime() });
          if (inserted.length === 0) return false;
          writeEffects(db, op.effects);
          return true;
        }),
      ));
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
    async watermark() {
      const row = db.select().from(lifecycleWatermark).where(eq(lifecycleWatermark.name, WATERMARK)).get();
      return row ? { passedAt: row.passedAt, basis: row.basis } : null;
    },
    async saveWatermark(w) {
      // Writes too, so in a turn of the background writers like apply.
      await handle.backgroundGate.write(() =>
        db
          .insert(lifecycleWatermark)
          .values({ name: WATERMARK, passedAt: w.passedAt, basis: w.basis })
          .onConflictDoUpdate({ target: lifecycleWatermark.name, set: { passedAt: w.passedAt, basis: w.basis }, setWhere: lte(lifecycleWatermark.passedAt, w.passedAt) })
          .run(),
      );
    },
    async optimize() {
      // SQLite's advice for long-lived connections: run it now and then; it analyzes only tables whose
      // row count changed by 10x since their last ANALYZE (bounded by analysis_limit, set at open).
      // ANALYZE writes its statistics: in a turn of the background writers.
      await handle.backgroundGate.write(() => handle.sqlite.exec("PRAGMA optimize"));
    },
  };
}
