import { and, asc, desc, eq, gt, gte, lt, lte, or, sql, type AnyColumn, type SQL } from "drizzle-orm";
import { atomically, type PgDb, type PgHandle, type PgExecutor } from "../../db/pg";
import { rethrowConstraint } from "../../db/errors";
import { activations, floatingSessions, licenseAddons, licenses } from "../../db/schema-pg";
import { asciiLower as asciiLowerText } from "../../shared/ascii";
import type { License, LicenseListFilter, LicenseRepo } from "./repo";
import { licenseListDriver, licenseListOrder, prefixUpperBound } from "./listing";

const toLicense = (r: typeof licenses.$inferSelect): License => ({ ...r });

/**
 * SQLite's lower() folds ASCII letters only; under the "C" collation PostgreSQL's lower() does the
 * same whatever the database locale, and compares bytewise as SQLite's BINARY collation does, so the
 * list matches and orders exactly as on SQLite. The expressions are the indexes' (schema-pg/licenses.ts).
 */
const emailLower = sql`lower(${licenses.email} COLLATE "C")`;
const emailDomain = sql`lower(substr(${licenses.email}, strpos(${licenses.email}, '@') + 1) COLLATE "C")`;
/** Ids compare bytewise on SQLite; COLLATE "C" keeps PostgreSQL's order and cursor the same. */
const idC = sql`${licenses.id} COLLATE "C"`;
const text = (v: string) => sql`${v}::text`;

const instant = (d: Date) => sql`${d.toISOString()}::timestamptz`;

/**
 * The admin list's statement; the SQLite twin (repo.sqlite.ts) says how each shape is one index
 * range. Unlike SQLite (no statistics), PostgreSQL plans by the table's statistics, so the other
 * filters are written plainly: it reads the driving index in order, or the index of a filter it knows
 * to be more selective (a few rows, then a top-N sort of those). Marking them as residual (as on
 * SQLite) hid their statistics and made it sort thousands of a plan's rows at a million licenses.
 */
export function licenseListQueryPg(db: PgDb, f: LicenseListFilter) {
  const driver = licenseListDriver(f);
  const order = licenseListOrder(f);
  const where: SQL[] = [];
  const eqOn = (col: SQL | AnyColumn, v: string) => where.push(sql`${col} = ${text(v)}`);
  if (f.productId) eqOn(licenses.productId, f.productId);
  if (f.planId) eqOn(licenses.planId, f.planId);
  if (f.status) eqOn(licenses.status, f.status);
  if (f.id !== undefined) eqOn(licenses.id, f.id);
  if (f.keyHash !== undefined) eqOn(licenses.keyHash, f.keyHash);
  if (f.keyHint !== undefined) eqOn(licenses.keyHint, f.keyHint);
  if (f.externalCustomerId !== undefined) eqOn(licenses.externalCustomerId, f.externalCustomerId);
  if (f.externalWorkspaceId !== undefined) eqOn(licenses.externalWorkspaceId, f.externalWorkspaceId);
  if (f.email !== undefined) eqOn(emailLower, asciiLowerText(f.email));
  if (f.emailDomain !== undefined) eqOn(emailDomain, asciiLowerText(f.emailDomain));
  if (f.emailPrefix !== undefined) {
    const p = asciiLowerText(f.emailPrefix);
    where.push(sql`${emailLower} >= ${text(p)}`);
    const upper = prefixUpperBound(p);
    if (upper !== null) where.push(sql`${emailLower} < ${text(upper)}`);
  }
  if (f.createdAfter) where.push(sql`${licenses.createdAt} >= ${instant(f.createdAfter)}`);
  if (f.createdBefore) where.push(sql`${licenses.createdAt} < ${instant(f.createdBefore)}`);
  // NULL <= x is not true: licenses without an expiry never match.
  if (f.expiringBefore) where.push(lte(licenses.validUntil, f.expiringBefore));
  const c = f.cursor;
  let orderBy: SQL[];
  // The cursor is a row-value range on the index's trailing columns: the read starts right after it.
  if (order === "valid_until") {
    if (c) where.push(sql`(${licenses.validUntil}, ${idC}) > (${instant(new Date(c.t))}, ${text(c.id)})`);
    orderBy = [asc(licenses.validUntil), asc(idC)];
  } else if (order === "email") {
    if (c) where.push(sql`(${emailLower}, ${licenses.createdAt}, ${idC}) > (${text(c.e!)}, ${instant(new Date(c.t))}, ${text(c.id)})`);
    orderBy = [asc(emailLower), asc(licenses.createdAt), asc(idC)];
  } else {
    if (c) where.push(sql`(${licenses.createdAt}, ${idC}) < (${instant(new Date(c.t))}, ${text(c.id)})`);
    // Newest first by (created_at, id); ids are UUIDv7, so the order is total and stable.
    orderBy = [desc(licenses.createdAt), desc(idC)];
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

async function readLicense(tx: PgExecutor, id: string, forUpdate = false): Promise<License | null> {
  const q = tx.select().from(licenses).where(eq(licenses.id, id));
  const [r] = forUpdate ? await q.for("update") : await q;
  return r ? toLicense(r) : null;
}

export function createLicenseRepoPg(handle: PgHandle): LicenseRepo {
  const { db } = handle;
  // Hot path (activate/verify): the SQL is built once; postgres.js prepares it on the server.
  const byKeyHash = db.select().from(licenses).where(eq(licenses.keyHash, sql.placeholder("hash"))).prepare("licenses_by_key_hash");

  return {
    async create(license, addonIds) {
      try {
        // In the verb's unit of work (durable); on its own, one transaction.
        return await atomically(handle, async (tx) => {
          await tx.insert(licenses).values(license);
          if (addonIds.length) {
            await tx.insert(licenseAddons).values(addonIds.map((addonId) => ({ licenseId: license.id, addonId, createdAt: license.createdAt })));
          }
          return license;
        });
      } catch (e) {
        rethrowConstraint(e, { unique: "License key collision; retry.", foreignKey: "Unknown product, plan or add-on." });
      }
    },
    findById: (id) => readLicense(db, id),
    async findByKeyHash(hash) {
      const [r] = await byKeyHash.execute({ hash });
      return r ? toLicense(r) : null;
    },
    async list(f) {
      const rows = await licenseListQueryPg(db, f);
      return { items: rows.slice(0, f.limit).map(toLicense), hasMore: rows.length > f.limit };
    },
    async update(id, patch, at, opts = {}) {
      try {
        // In the unit of work that locked the row (lock); on its own, one transaction.
        return await atomically(handle, async (tx) => {
          // An empty patch changes nothing, updated_at included (a caller that only wanted the lock).
          if (Object.keys(patch).length > 0) await tx.update(licenses).set({ ...patch, updatedAt: at }).where(eq(licenses.id, id));
          if (opts.clearActivations) {
            await tx.delete(activations).where(eq(activations.licenseId, id));
            // DECISIONS: revoke "drops activations and floating sessions".
            await tx.delete(floatingSessions).where(eq(floatingSessions.licenseId, id));
          }
          return (await readLicense(tx, id))!;
        });
      } catch (e) {
        // A plan deleted between the caller's check and this write.
        rethrowConstraint(e, { foreignKey: "The plan no longer exists." });
      }
    },
    async lock(id) {
      return db.transaction((tx) => readLicense(tx, id, true));
    },
    async addonIds(licenseId) {
      // SQLite answers from the (license_id, addon_id) primary-key index: add-on id order.
      const rows = await db
        .select({ id: licenseAddons.addonId })
        .from(licenseAddons)
        .where(eq(licenseAddons.licenseId, licenseId))
        .orderBy(sql`${licenseAddons.addonId} COLLATE "C"`);
      return rows.map((r) => r.id);
    },
    async attachAddon(licenseId, addonId, at) {
      try {
        const added = await db.insert(licenseAddons).values({ licenseId, addonId, createdAt: at }).onConflictDoNothing().returning({ id: licenseAddons.addonId });
        return added.length > 0;
      } catch (e) {
        // An add-on deleted between the caller's check and this write.
        rethrowConstraint(e, { foreignKey: "The add-on no longer exists." });
      }
    },
    async detachAddon(licenseId, addonId) {
      const gone = await db
        .delete(licenseAddons)
        .where(and(eq(licenseAddons.licenseId, licenseId), eq(licenseAddons.addonId, addonId)))
        .returning({ id: licenseAddons.addonId });
      return gone.length > 0;
    },
  };
}
