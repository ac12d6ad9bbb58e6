// The query seam's SQLite side (query.ts): the schema's own tables and the bun:sqlite drizzle.
import { sql } from "drizzle-orm";
import type { DbHandle } from "../client";
import { BUSY_TIMEOUT_MS } from "../client";
import { isSqliteBusyCode } from "../errors";
import * as schema from "../schema";
import type { QueryDialect } from "./query";

export function sqliteQueryDialect(handle: Pick<DbHandle, "db" | "sqlite">): QueryDialect {
  const { sqlite } = handle;
  return {
    engine: "sqlite",
    db: handle.db,
    tables: schema,
    byteOrder: (column) => sql`${column}`,
    forUpdate: (query) => query,
    requireUnit(method) {
      // The gate lets no other call run while a unit is open, so an open transaction is the caller's.
      if (!sqlite.inTransaction) throw new Error(`${method} writes several statements and runs only in a unit of work (deps.db.transaction)`);
    },
    async lockKey(name) {
      if (!sqlite.inTransaction) throw new Error(`lockKey(${name}) outside a unit of work`);
    },
    bestEffortWrite(write) {
      // drizzle's SQLite builders run their statement when awaited (`then` calls an async execute
      // whose statement runs before its first await), so the statement runs, and meets the lock or
      // not, while busy_timeout is 0: bun:sqlite would otherwise wait for the lock on the event loop.
      sqlite.exec("PRAGMA busy_timeout = 0");
      try {
        return Promise.resolve(
          write().then(
            () => undefined,
            (error: unknown) => {
              const code = (error as { code?: unknown } | null)?.code;
              if (typeof code === "string" && isSqliteBusyCode(code)) return;
              throw error;
            },
          ),
        );
      } finally {
        sqlite.exec(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
      }
    },
    async retriedWrite(write) {
      return await write();
    },
    prepared(_name, build) {
      type Stmt = { all(params: Record<string, unknown>): unknown };
      let stmt: Stmt | undefined;
      return (async (params: Record<string, unknown>) => (stmt ??= (build() as unknown as { prepare(): Stmt }).prepare()).all(params)) as never;
    },
  };
}
