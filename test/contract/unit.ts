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
