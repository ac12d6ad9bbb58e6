import { and, asc, desc, eq, gt, gte, lt, lte, or, sql, type AnyColumn, type SQL } from "drizzle-orm";
import { lift, immediate, lazyStatement, type Db, type DbHandle } from "../../db/client";
import { rethrowConstraint } from "../../db/errors";
import { activations, floatingSessions, licenseAddons, licenses } from "../../db/schema";
import { asciiLower } from "../../shared/ascii";
import type { License, LicenseListFilter, LicenseRepo } from "./repo";
import { licenseListDriver, licenseListOrder, prefixUpperBound } from "./listing";

const toLicense = (r: typeof licenses.$inferSelect): License => ({ ...r });

const emailLower = sql`lower(${licenses.email})`;
const emailDomain = sql`lower(substr(${licenses.email}, instr(${licenses.email}, '@') + 1))`;

/**
 * A condition checked on the rows the driving index yields, never used to pick an index: the unary
 * `+` is SQLite's documented way to disqualify a term from index use (its value is unchanged). Without
 * it the planner (no ANALYZE statistics) may read another filter's index and sort every match.
 */
const residual = (x: SQL | AnyColumn) => sql`+${x}`;

/**
 * The admin list's statement (exported so the contract test can EXPLAIN exactly it). The driving
 * filter (listing.ts: licenseListDriver) is an equality or range on a prefix of one index that ends
 * in the page's order; the cursor is a row-value range on that index's trailing columns, so the read
 * starts at the cursor and stops after limit + 1 rows at any table size.
 */
export function licenseListQuery(db: Db, f: LicenseListFilter) {
  const driver = licenseListDriver(f);
  const order = licenseListOrder(f);
  const where: SQL[] = [];
  const eqOn = (drives: boolean, col: SQL | AnyColumn, v: string) => where.push(drives ? sql`${col} = ${v}` : sql`${residual(col)} = ${v}`);
  if (f.productId) eqOn(driver === "product" || driver === "productStatus", licenses.productId, f.productId);
  if (f.planId) eqOn(driver === "plan", licenses.planId, f.planId);
  if (f.status) {
    // Without ANALYZE statistics SQLite weighs every equality alike and, after a cursor, read the
    // product's (…, valid_until, id) range checking status row by row; unlikely() (a planner hint, a
    // no-op on the value) makes it prefer the index that has the status too.
    if (driver === "productStatus") where.push(sql`unlikely(${licenses.status} = ${f.status})`);
    else eqOn(driver === "status", licenses.status, f.status);
  }
  if (f.id !== undefined) eqOn(driver === "id", licenses.id, f.id);
  if (f.keyHash !== undefined) eqOn(driver === "keyHash", licenses.keyHash, f.keyHash);
  if (f.keyHint !== undefined) eqOn(driver === "keyHint", licenses.keyHint, f.keyHint);
  if (f.externalCustomerId !== undefined) eqOn(driver === "externalCustomerId", licenses.externalCustomerId, f.externalCustomerId);
  if (f.externalWorkspaceId !== undefined) eqOn(driver === "externalWorkspaceId", licenses.externalWorkspaceId, f.externalWorkspaceId);
  if (f.email !== undefined) eqOn(driver === "email", emailLower, asciiLower(f.email));
  if (f.emailDomain !== undefined) eqOn(driver === "emailDomain", emailDomain, asciiLower(f.emailDomain));
  if (f.emailPrefix !== undefined) {
    const p = asciiLower(f.emailPrefix);
    const e = driver === "emailPrefix" ? emailLower : residual(emailLower);
    where.push(sql`${e} >= ${p}`);
    const upper = prefixUpperBound(p);
    if (upper !== null) where.push(sql`${e} < ${upper}`);
  }
  // created_at is in every created-order index (after the driving equality); a residual elsewhere.
  const created = order === "created" ? licenses.createdAt : residual(licenses.createdAt);
  if (f.createdAfter) where.push(sql`${created} >= ${f.createdAfter.getTime()}`);
  if (f.createdBefore) where.push(sql`${created} < ${f.createdBefore.getTime()}`);
  // NULL <= x is not true: licenses without an expiry never match.
  if (f.expiringBefore) where.push(lte(licenses.validUntil, f.expiringBefore));
  const c = f.cursor;
  let orderBy: SQL[];
  // The cursor is a row-value range on the index's trailing columns: the read starts right after it.
  if (order === "valid_until") {
    if (c) where.push(sql`(${licenses.validUntil}, ${licenses.id}) > (${c.t}, ${c.id})`);
    orderBy = [asc(licenses.validUntil), asc(licenses.id)];
  } else if (order === "email") {
    if (c) where.push(sql`(${emailLower}, ${licenses.createdAt}, ${licenses.id}) > (${c.e!}, ${c.t}, ${c.id})`);
    orderBy = [asc(emailLower), asc(licenses.createdAt), asc(licenses.id)];
  } else {
    if (c) where.push(sql`(${licenses.createdAt}, ${licenses.id}) < (${c.t}, ${c.id})`);
    // Newest first by (created_at, id); ids are UUIDv7, so the order is total and stable.
    orderBy = [desc(licenses.createdAt), desc(licenses.id)];
  }
  // A unique lookup (id, key) reads one row: no order to keep.
  if (driver === "id" || driver === "keyHash") orderBy = [];
  return db
    .select()
    .from(licenses)
    .where(where.length ? and(...where) : undefined)
    .orderBy(...orderBy)
    .limit(f.limit + 1);
}

export function createLicenseRepo(handle: DbHandle): LicenseRepo {
  const { db } = handle;
  const byKeyHash = lazyStatement(() => db.select().from(licenses).where(eq(licenses.keyHash, sql.placeholder("hash"))).prepare());
  const byId = lazyStatement(() => db.select().from(licenses).where(eq(licenses.id, sql.placeholder("id"))).prepare());
  const findById = (id: string) => {
    const r = byId().get({ id });
    return r ? toLicense(r) : null;
  };
  const clearActivationsHooks: ((licenseId: string) => void)[] = [
    (licenseId) => db.delete(activations).where(eq(activations.licenseId, licenseId)).run(),
    // DECISIONS: revoke "drops activations and floating sessions".
    (licenseId) => db.delete(floatingSessions).where(eq(floatingSessions.licenseId, licenseId)).run(),
  ];

  return {
    async create(license, addonIds) {
      try {
        // One transaction (a savepoint of the verb's unit of work, whose commit is durable).
        return immediate(handle, () => {
          db.insert(licenses).values(license).run();
          for (const addonId of addonIds) {
            db.insert(licenseAddons).values({ licenseId: license.id, addonId, createdAt: license.createdAt }).run();
          }
          return license;
        });
      } catch (e) {
        rethrowConstraint(e, { unique: "License key collision; retry.", foreignKey: "Unknown product, plan or add-on." });
      }
    },
    findById: lift(findById),
    async findByKeyHash(hash) {
      const r = byKeyHash().get({ hash });
      return r ? toLicense(r) : null;
    },
    async list(f) {
      const rows = licenseListQuery(db, f).all();
      return { items: rows.slice(0, f.limit).map(toLicense), hasMore: rows.length > f.limit };
    },
    async update(id, patch, at, opts = {}) {
      try {
        // One transaction (a savepoint of the unit of work that locked the row).
        return immediate(handle, () => {
          // An empty patch changes nothing, updated_at included (a caller that only wanted the lock).
          if (Object.keys(patch).length > 0) db.update(licenses).set({ ...patch, updatedAt: at }).where(eq(licenses.id, id)).run();
          if (opts.clearActivations) for (const clear of clearActivationsHooks) clear(id);
          return findById(id)!;
        });
      } catch (e) {
        // A plan deleted between the caller's check and this write.
        rethrowConstraint(e, { foreignKey: "The plan no longer exists." });
      }
    },
    async lock(id) {
      return immediate(handle, () => findById(id));
    },
    async addonIds(licenseId) {
      return db.select({ id: licenseAddons.addonId }).from(licenseAddons).where(eq(licenseAddons.licenseId, licenseId)).all().map((r) => r.id);
    },
    async attachAddon(licenseId, addonId, at) {
      try {
        const added = db.insert(licenseAddons).values({ licenseId, addonId, createdAt: at }).onConflictDoNothing().returning({ id: licenseAddons.addonId }).all();
        return added.length > 0;
      } catch (e) {
        // An add-on deleted between the caller's check and this write.
        rethrowConstraint(e, { foreignKey: "The add-on no longer exists." });
      }
    },
    async detachAddon(licenseId, addonId) {
      const gone = db
        .delete(licenseAddons)
        .where(and(eq(licenseAddons.licenseId, licenseId), eq(licenseAddons.addonId, addonId)))
        .returning({ id: licenseAddons.addonId })
        .all();
      return gone.length > 0;
    },
  };
}
