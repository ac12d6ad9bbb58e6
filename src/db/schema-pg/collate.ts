import { sql, type AnyColumn, type SQL } from "drizzle-orm";

/**
 * A key column compared by bytes, as SQLite's BINARY collation compares it: the keyset listings order
 * by `id COLLATE "C"` (db/cursor.ts), and an index serves that order only with the same collation.
 */
export const idC = (column: AnyColumn): SQL => sql`${column} COLLATE "C"`;
