// The schema's dialect seam, SQLite side. The one schema source (src/db/schema/*.ts) is written
// against these names; scripts/gen-pg-schema.ts writes src/db/schema-pg/ from it with this import
// swapped for ./pg (the same names, PostgreSQL's types). What differs between the engines is here,
// once: storage types (timestamps, JSON, booleans, 64-bit integers) and the SQL of index
// expressions (bytewise order, JSON paths, case folding).
import { sql, type SQL } from "drizzle-orm";
import { integer, text, type AnySQLiteColumn, type SQLiteColumn } from "drizzle-orm/sqlite-core";

export { sqliteTable as table, text, integer, index, uniqueIndex, primaryKey } from "drizzle-orm/sqlite-core";
export { sql };

/** A column another table's foreign key points at (`.references(() => …)`). */
export type AnyColumn = AnySQLiteColumn;

/** An instant: epoch milliseconds in an INTEGER (read as a Date). */
export const ts = (name: string) => integer(name, { mode: "timestamp_ms" });
/** A JSON document: TEXT holding JSON. */
export const json = (name: string) => text(name, { mode: "json" });
/** A boolean: INTEGER 0/1. */
export const bool = (name: string) => integer(name, { mode: "boolean" });
/** An integer that may pass 2^31 (sizes, counters, epoch ms): SQLite's INTEGER is 64-bit already. */
export const bigint = (name: string) => integer(name);

/**
 * A key column in an index, in the order keyset pages read it: by bytes. SQLite's BINARY collation
 * already compares that way (db/cursor.ts).
 */
export const byteOrder = (column: SQLiteColumn): SQLiteColumn => column;
/** lower() of a text expression, ASCII only (SQLite's lower()). */
export const lowerAscii = (expr: SQL | SQLiteColumn): SQL => sql`lower(${expr})`;
/** The text after the first "@" of an address. */
export const domainOf = (column: SQLiteColumn): SQL => sql`substr(${column}, instr(${column}, '@') + 1)`;
/**
 * A text field of a JSON column, by path: `->>` with a JSON path (drizzle-kit splits an index
 * expression at its commas, so json_extract(…, …) cannot be written here).
 */
export const jsonText = (column: SQLiteColumn, ...path: string[]): SQL => sql`${column} ->> ${sql.raw(`'$.${jsonPath(path).join(".")}'`)}`;

/** The keys of a JSON path, written into SQL as they are: plain names only. */
function jsonPath(path: string[]): string[] {
  if (path.length === 0 || !path.every((k) => /^[a-z_]+$/.test(k))) throw new TypeError(`not a plain JSON path: ${JSON.stringify(path)}`);
  return path;
}
