// DataStore.transaction on PostgreSQL: a drizzle transaction (one pooled connection, READ
// COMMITTED) and a repository set bound to it. Repository methods that open their own transaction
// get a savepoint on it.
import type { PgDb, PgHandle, PgSql } from "./pg";

/** The handle `fn` gets: its `db` and `sql` both run on the transaction's connection. */
export async function withPgTransaction<T>(handle: PgHandle, fn: (tx: PgHandle) => Promise<T>, opts: { durable?: boolean } = {}): Promise<T> {
  return handle.db.transaction(async (tx) => {
    // drizzle's postgres-js transaction keeps the transaction's client on its session.
    const client = (tx as unknown as { session: { client: PgSql } }).session.client;
    // The commit waits for the WAL flush even where the server or role sets synchronous_commit off.
    if (opts.durable) await client`SET LOCAL synchronous_commit = on`;
    const txHandle: PgHandle = {
      db: tx as unknown as PgDb,
      sql: client,
      inTransaction: true,
      ping: handle.ping,
      close: async () => {
        throw new Error("a transaction's handle cannot close the pool");
      },
    };
    return fn(txHandle);
  });
}
