// A unit of work on one connection, as DataStore.transaction runs one (db/transaction.sqlite.ts,
// db/transaction.pg.ts): the repositories bound to it; a throw rolls everything back. For contract
// tests of repositories whose verbs own the transaction.
import type { DbHandle } from "../../src/db/client";
import type { PgHandle } from "../../src/db/pg";
import { createSqliteGate } from "../../src/db/transaction.sqlite";
import { withPgTransaction } from "../../src/db/transaction.pg";
import { createSqliteRepos } from "../../src/container";
import { createPgRepos } from "../../src/repos.pg";
import type { Repos } from "../../src/deps";
import type { Opened } from "./harness";
import { pgNodes } from "./inspect";

export type Unit = <T>(fn: (repos: Repos) => Promise<T>) => Promise<T>;

/** Units on this connection (SQLite: through one gate, so units of one process queue as they do in a node). */
export function unitOn(handle: { sqlite: DbHandle } | { pg: PgHandle }): Unit {
  if ("sqlite" in handle) {
    const gate = createSqliteGate(handle.sqlite);
    const repos = createSqliteRepos(handle.sqlite);
    return (fn) => gate.run(() => fn(repos));
  }
  return (fn) => withPgTransaction(handle.pg, (tx) => fn(createPgRepos(tx) as Repos));
}

/** Units on the opened database's own connection. */
export const unitOf = (o: Opened): Unit => unitOn(o.sqlite ? { sqlite: o.sqlite } : { pg: o.pg! });

/**
 * Runs `body` with units of work on `n` nodes of the opened PostgreSQL database (independent pools,
 * as separate server processes: inspect.ts pgNodes), then closes them.
 */
export async function withPgUnits<T>(o: Opened, n: number, body: (units: Unit[]) => Promise<T>): Promise<T> {
  const nodes = await pgNodes(o, n);
  try {
    return await body(nodes.handles.map((pg) => unitOn({ pg })));
  } finally {
    await nodes.close();
  }
}
