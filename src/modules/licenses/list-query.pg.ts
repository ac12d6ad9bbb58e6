// The admin license list's statement on PostgreSQL (GET /admin/licenses). Everything else of the
// license repository is written once for both engines (repo.sql.ts); this statement is not, because
// it is genuinely this engine's: planned by the table's statistics, it must not get the planner hints
// SQLite's needs (list-query.sqlite.ts), and its values are typed (::text, ::timestamptz) and its
// text and ids compared under COLLATE "C", as the indexes are built. Measured on a million licenses,
// analyzed (docs/performance.md, "The admin license list at a million licenses"; bench/scale.ts's
// list shapes): every shape reads its index in order in 0.03-0.3 ms, except where a small sort is
// rightly cheaper. test/contract/license-search.contract.test.ts EXPLAINs exactly this statement for
// every shape and search branch, first and next pages, and fails on a table scan or a sort.
import { and, asc, desc, lte, sql, type AnyColumn, type SQL } from "drizzle-orm";
import type { PgDb } from "../../db/pg";
import { licenses } from "../../db/schema-pg";
import { asciiLower as asciiLowerText } from "../../shared/ascii";
import type { LicenseListFilter } from "./repo";
import { licenseListDriver, licenseListOrder, prefixUpperBound } from "./listing";

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
 * The admin list's statement; SQLite's (list-query.sqlite.ts) says how each shape is one index
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
