// The schema's dialect seam, PostgreSQL side: the names of ./sqlite with PostgreSQL's types, for
// src/db/schema-pg/ (written from src/db/schema/ by scripts/gen-pg-schema.ts).
import { sql, type SQL } from "drizzle-orm";
import { bigint as pgBigint, boolean, jsonb, timestamp, type AnyPgColumn, type PgColumn } from "drizzle-orm/pg-core";

export { pgTable as table, text, integer, index, uniqueIndex, primaryKey } from "drizzle-orm/pg-core";
export { sql };

/** A column another table's foreign key points at (`.references(() => …)`). */
export type AnyColumn = AnyPgColumn;

/** An instant: timestamptz (read as a Date). */
export const ts = (name: string) => timestamp(name, { withTimezone: true, mode: "date" });
/** A JSON document: jsonb. */
export const json = (name: string) => jsonb(name);
/** A boolean. */
export const bool = (name: string) => boolean(name);
/** An integer that may pass 2^31 (sizes, counters, epoch ms): bigint, read as a JS number. */
export const bigint = (name: string) => pgBigint(name, { mode: "number" });

/**
 * A key column in an index, in the order keyset pages read it: by bytes, as SQLite compares it.
 * The listings order by `id COLLATE "C"` (db/cursor.ts), and an index serves that order only with the
 * same collation: in the default collation the plan would sort.
 */
export const byteOrder = (column: PgColumn): SQL => sql`${column} COLLATE "C"`;
/** lower() of a text expression, in the C collation: ASCII only, as SQLite's lower(). */
export const lowerAscii = (expr: SQL | PgColumn): SQL => sql`lower(${expr} COLLATE "C")`;
/** The text after the first "@" of an address. */
export const domainOf = (column: PgColumn): SQL => sql`substr(${column}, strpos(${column}, '@') + 1)`;
/** A text field of a JSON column, by path: `->` down to the last key, then `->>`. */
export const jsonText = (column: PgColumn, ...path: string[]): SQL => {
  if (path.length === 0 || !path.every((k) => /^[a-z_]+$/.test(k))) throw new TypeError(`not a plain JSON path: ${JSON.stringify(path)}`);
  const keys = path.map((k) => `'${k}'`);
  return sql`${column} ${sql.raw(keys.length > 1 ? `-> ${keys.slice(0, -1).join(" -> ")} ->> ${keys[keys.length - 1]}` : `->> ${keys[0]}`)}`;
};
