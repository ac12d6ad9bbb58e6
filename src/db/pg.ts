// drizzle over postgres.js, for DATABASE_URL=postgres://… (the SQLite counterpart is client.ts).
// One pool per process; every node of a deployment opens its own.
import postgres from "postgres";
import { drizzle, type PostgresJsDatabase } from "drizzle-orm/postgres-js";
import * as schema from "./schema-pg";

/** PostgreSQL `bigint` (int8, oid 20) as a JS number: counters, sizes and `count(*)` stay below 2^53. */
const BIGINT_AS_NUMBER = {
  to: 20,
  from: [20],
  serialize: (value: number) => String(value),
  parse: (raw: string) => Number(raw),
};

export type PgSql = postgres.Sql<{ bigint: number }>;
export type PgDb = PostgresJsDatabase<typeof schema> & { $client: PgSql };
/** A drizzle PostgreSQL database or an open transaction on it. */
export type PgExecutor = Pick<PgDb, "insert" | "select" | "update" | "delete" | "execute">;

export interface PgHandle {
  /**
   * The postgres.js client. drizzle (below) makes it return timestamps as strings and send jsonb
   * parameters as given, so raw queries should cast (`::jsonb`, `::timestamptz`) and convert.
   */
  sql: PgSql;
  db: PgDb;
  /** Set on the handle DataStore.transaction gives its repositories (db and sql are its connection). */
  inTransaction?: boolean;
  /** Rejects when the database cannot answer (health check). */
  ping(): Promise<void>;
  /** Ends the pool, waiting up to 5 s for running queries; a second call does nothing. */
  close(): Promise<void>;
}

export function openPostgres(url: string, opts: { max?: number } = {}): PgHandle {
  const sql = postgres(url, {
    max: opts.max ?? 10,
    // Notices ("relation already exists, skipping" from CREATE … IF NOT EXISTS) are not errors and
    // would otherwise go to console.log, outside the structured logger.
    onnotice: () => {},
    types: { bigint: BIGINT_AS_NUMBER },
  });
  const db = drizzle({ client: sql, schema }) as PgDb;
  let closing: Promise<void> | null = null;
  return {
    sql,
    db,
    async ping() {
      await sql`SELECT 1`;
    },
    close() {
      closing ??= sql.end({ timeout: 5 });
      return closing;
    },
  };
}
