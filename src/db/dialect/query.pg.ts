// The query seam's PostgreSQL side (query.ts): the generated schema-pg tables and the postgres.js
// drizzle, handed to repositories written once under the SQLite-typed names they share.
import { sql } from "drizzle-orm";
import type { PgHandle } from "../pg";
import * as schema from "../schema-pg";
import { autocommitWrite } from "../serializable.pg";
import type { QueryDialect } from "./query";

export function pgQueryDialect(handle: Pick<PgHandle, "db" | "inTransaction">): QueryDialect {
  return {
    engine: "postgres",
    db: handle.db as unknown as QueryDialect["db"],
    tables: schema as unknown as QueryDialect["tables"],
    byteOrder: (column) => sql`${column} COLLATE "C"`,
    forUpdate: (query, strength = "update", opts) =>
      (query as unknown as { for(strength: string, config?: { skipLocked: true }): unknown }).for(strength, opts?.skipLocked ? { skipLocked: true } : undefined) as typeof query,
    requireUnit(method) {
      if (!handle.inTransaction) throw new Error(`${method} writes several statements and runs only in a unit of work (deps.db.transaction)`);
    },
    async lockKey(name) {
      // Outside a transaction the lock would end with its own statement.
      if (!handle.inTransaction) throw new Error(`lockKey(${name}) outside a unit of work`);
      await handle.db.execute(sql`SELECT pg_advisory_xact_lock(hashtextextended(${name}, 0))`);
    },
    async bestEffortWrite(write) {
      await autocommitWrite(async () => await write(), "skip");
    },
    async retriedWrite(write) {
      return (await autocommitWrite(async () => await write(), "retry"))!;
    },
    prepared(name, build) {
      type Stmt = { execute(params: Record<string, unknown>): Promise<unknown> };
      let stmt: Stmt | undefined;
      return ((params: Record<string, unknown>) => (stmt ??= (build() as unknown as { prepare(name: string): Stmt }).prepare(name)).execute(params)) as never;
    },
  };
}
