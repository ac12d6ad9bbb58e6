// Opaque keyset-pagination cursors: base64url JSON of the last row's sort key.
import { and, eq, gt, gte, lt, lte, or, sql, type Column, type SQL } from "drizzle-orm";
import { AppError } from "../shared/errors";
import { isStorableInstant } from "../shared/clock";

export interface Cursor {
  t: number;
  id: string;
}

export function encodeCursor(c: Cursor): string {
  return Buffer.from(JSON.stringify(c), "utf8").toString("base64url");
}

/** The ids Keyward's cursors carry (UUIDs); anything else is not a cursor Keyward issued. */
const CURSOR_ID = /^[0-9A-Za-z_-]{1,64}$/;

/**
 * A cursor as Keyward issues it: an integer instant both engines store, and an id. Anything else is
 * 400: a crafted `t` past year 9999 or an id with U+0000 answered 500 on PostgreSQL (and read a
 * meaningless page on SQLite).
 */
export function decodeCursor(raw: string): Cursor {
  try {
    const c = JSON.parse(Buffer.from(raw, "base64url").toString("utf8")) as Partial<Cursor>;
    if (typeof c.t === "number" && Number.isInteger(c.t) && isStorableInstant(c.t) && typeof c.id === "string" && CURSOR_ID.test(c.id)) {
      return { t: c.t, id: c.id };
    }
  } catch {
    // fall through
  }
  throw new AppError("VALIDATION_ERROR", { details: { fields: { cursor: "invalid cursor" } } });
}

/** What a paged request asked for, checked: its limit in [1, max] (`default` when absent) and its cursor. */
export interface PageRequest {
  limit: number;
  cursor: Cursor | null;
}

/**
 * A request's `limit` and `cursor`, checked before anything is looked up: a cursor Keyward did not
 * issue is 400 VALIDATION_ERROR whatever else the request names.
 */
export function pageRequest(input: { limit?: number; cursor?: string | null }, bounds: { default: number; max: number }): PageRequest {
  return {
    limit: Math.min(Math.max(1, input.limit ?? bounds.default), bounds.max),
    cursor: input.cursor ? decodeCursor(input.cursor) : null,
  };
}

/**
 * One page of a newest-first keyset listing: `rows` was read with `limit + 1`, so one row more than
 * the page means there is a next page, whose cursor is the last row's (created_at, id).
 */
export function keysetPage<T extends { createdAt: Date; id: string }>(rows: T[], limit: number): { items: T[]; nextCursor: string | null } {
  const items = rows.slice(0, limit);
  const last = items[items.length - 1];
  return { items, nextCursor: rows.length > limit && last ? encodeCursor({ t: last.createdAt.getTime(), id: last.id }) : null };
}

/**
 * The rows after `cursor` in a newest-first (created_at, id) listing; ids are UUIDv7, so the order is
 * total and stable. `id` must compare by bytes, as SQLite's BINARY collation does: the column on
 * SQLite, `id COLLATE "C"` on PostgreSQL, so both engines page identically.
 */
export function afterCursor(createdAt: Column, id: Column | SQL, cursor: Cursor): SQL {
  const at = new Date(cursor.t);
  // `created_at <= t` says the same as the disjunction, but it is what lets either engine start the
  // index range at the cursor: without it a deep page walks every newer row of the index first.
  return and(lte(createdAt, at), or(lt(createdAt, at), and(eq(createdAt, at), sql`${id} < ${cursor.id}`)))!;
}

/** The rows after `cursor` in an oldest-first (created_at, id) listing: afterCursor's mirror. */
export function afterCursorAsc(createdAt: Column, id: Column | SQL, cursor: Cursor): SQL {
  const at = new Date(cursor.t);
  return and(gte(createdAt, at), or(gt(createdAt, at), and(eq(createdAt, at), sql`${id} > ${cursor.id}`)))!;
}
