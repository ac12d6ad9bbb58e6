// Another writer in the middle of a write, for tests of what must not wait for one: on SQLite a
// second connection (to SQLite, another process) holding the database's write lock; on PostgreSQL
// a transaction on its own connection holding the rows `lockRows` locks. Returns its release.
import { Database } from "bun:sqlite";
import type postgres from "postgres";

export type WriterElsewhere =
  | { sqliteFile: string }
  | { pg: postgres.Sql; lockRows: (tx: postgres.ReservedSql) => Promise<unknown> };

export async function writerElsewhere(target: WriterElsewhere): Promise<() => Promise<void>> {
  if ("sqliteFile" in target) {
    const other = new Database(target.sqliteFile);
    other.exec("BEGIN IMMEDIATE");
    return async () => {
      other.exec("ROLLBACK");
      other.close();
    };
  }
  const reserved = await target.pg.reserve();
  await reserved`BEGIN`;
  await target.lockRows(reserved);
  return async () => {
    await reserved`ROLLBACK`;
    reserved.release();
  };
}

/** Runs `body` while the writer holds its lock; released afterwards whatever happens. */
export async function whileWriterElsewhere<T>(target: WriterElsewhere, body: () => Promise<T>): Promise<T> {
  const release = await writerElsewhere(target);
  try {
    return await body();
  } finally {
    await release();
  }
}
