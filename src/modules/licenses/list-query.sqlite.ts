// The admin license list's statement on SQLite (GET /admin/licenses). Everything else of the license
// repository is written once for both engines (repo.sql.ts); this statement is not, because it is
// genuinely this engine's: SQLite plans without statistics (Keyward does not run ANALYZE), so the
// statement keeps the planner on the one index range that ends in the page's order with two hints
// PostgreSQL must not get (list-query.pg.ts), the unary `+` residual and `unlikely()`. Measured on a
// million licenses (docs/performance.md, "The admin license list at a million licenses"; `bun
// bench/license-list.ts`): every shape's page of 50 in 0.05-0.17 ms at 1,000,000 as at 20,000
// (ratio 1.327), where a page took 0.5-2.8 s before. The contract test
// test/contract/license-search.contract.test.ts EXPLAINs exactly this statement for every shape and
// search branch and fails on a table scan or a sort.
import { and, asc, desc, lte, sql, type AnyColumn, type SQL } from "drizzle-orm";
import type { Db } from "../../db/client";
import { licenses } from "../../db/schema";
import { asciiLower } from "../../shared/ascii";
import type { LicenseListFilter } from "./repo";
import { licenseListDriver, licenseListOrder, prefixUpperBound } from "./listing";

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
