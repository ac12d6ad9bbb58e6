// The query seam (issue 27, item 2): what a repository written once (a module's repo.sql.ts) uses to
// reach either engine. drizzle's query builders have the same API on SQLite and PostgreSQL for what
// such a repository does (select, insert with ON CONFLICT, update and delete with RETURNING, awaited),
// so one file serves both; what differs is here, once, each engine's side in its own file
// (query.sqlite.ts, query.pg.ts): the tables, bytewise order, row locks and best-effort writes.
//
// The builder and the tables are typed as SQLite's (the schema's source, src/db/schema); on
// PostgreSQL they are the generated schema-pg tables and a postgres.js drizzle, whose builders take
// the same calls. A repository written once may therefore use only what both engines have: the
// architecture test refuses SQLite's synchronous executors (.get/.all/.run/.values/.prepare) and
// PostgreSQL's .for() in repo.sql.ts files, and every repository's contract suite runs on both.
import type { Column, SQL } from "drizzle-orm";
import type { Db } from "../client";
import type * as schema from "../schema";
import type { Engine } from "../store";

/** Every table, by its schema name (src/db/schema). */
export type Tables = typeof schema;

/** drizzle's builders, awaited (never .get/.all/.run: those are SQLite's alone). */
export type QueryDb = Pick<Db, "select" | "insert" | "update" | "delete">;

export interface QueryDialect {
  readonly engine: Engine;
  readonly db: QueryDb;
  readonly tables: Tables;
  /**
   * A key in ORDER BY and keyset comparisons, ordered by its bytes (db/cursor.ts): the column itself
   * on SQLite (BINARY collation), `col COLLATE "C"` on PostgreSQL (the indexes carry the same).
   */
  byteOrder(column: Column): SQL;
  /**
   * The rows a select reads, locked until the unit of work ends (SELECT … FOR UPDATE on PostgreSQL;
   * on SQLite the unit already holds the database's one write lock). "no key update" (FOR NO KEY
   * UPDATE) still lets other transactions insert rows whose foreign keys point at the locked ones.
   * `skipLocked`: rows another transaction holds are left out instead of waited for (a queue's claim).
   */
  forUpdate<Q>(query: Q, strength?: "update" | "no key update", opts?: { skipLocked?: boolean }): Q;
  /**
   * A named lock held until the unit of work ends, for a rule over rows that may not exist yet (how
   * many codes an address was sent): PostgreSQL's transaction-scoped advisory lock on the name's
   * hash; on SQLite the unit already holds the database's one write lock. Throws outside a unit.
   */
  lockKey(name: string): Promise<void>;
  /**
   * Refuses (throws) outside a unit of work: for a repository method of several statements that
   * must commit together (a row and its children, a write and the catalog generation it bumps). A
   * repository written once cannot open a transaction itself; this makes the caller's duty a check.
   */
  requireUnit(method: string): void;
  /**
   * A best-effort single-statement write (a last-seen time): dropped, with nothing written, when
   * another writer holds what it needs (SQLite: another process's write lock, not waited for since
   * bun:sqlite would wait on the event loop; PostgreSQL: a serialization conflict under a stricter
   * default isolation). `write` must return the drizzle builder itself, unawaited.
   */
  bestEffortWrite(write: () => PromiseLike<unknown>): Promise<void>;
  /**
   * A single-statement write outside any unit that must take effect: run again when PostgreSQL aborts
   * it for a serialization conflict (a REPEATABLE READ or SERIALIZABLE default isolation on the role
   * or database; READ COMMITTED would have waited and gone on). SQLite runs it once.
   */
  retriedWrite<R>(write: () => PromiseLike<R>): Promise<R>;
  /**
   * A statement prepared once (on its first call: a start builds none) and run with `sql.placeholder`
   * values; for the reads every request makes (a session's user). `name` names it on PostgreSQL.
   */
  prepared<Q extends PromiseLike<unknown>>(name: string, build: () => Q): (params: Record<string, unknown>) => Promise<Awaited<Q>>;
}
