// The runtime half of "a transaction cannot call outside itself" (the type half is Tx in store.ts).
// A closure over `deps` still reaches Deps' repositories from inside a transaction's callback; on
// SQLite they wait for the transaction (the gate, transaction.sqlite.ts), which waits for the
// callback: it never returned. On PostgreSQL they run on another connection, outside the
// transaction (not seeing its rows, or waiting for its locks). So while a callback runs, its async
// context carries an open scope (AsyncLocalStorage), and Deps' repositories and deps.db.transaction
// refuse at once when called from it. Other requests run in other async contexts and go on as
// before (waiting on SQLite, another connection on PostgreSQL). The scope closes when the callback
// settles: work it left behind may use Deps again. Built once per Deps (container.ts); the cost on
// every repository call is one getStore().
import { AsyncLocalStorage } from "node:async_hooks";
import type { DataStore, EngineStore, Tx, TxParts } from "./store";
import { wrapRepoMethods } from "./wrap-repos";

/** A programming error: code inside a transaction's callback reached outside the transaction. */
export class TransactionScopeError extends Error {
  override name = "TransactionScopeError";
}

export interface TransactionScope {
  /** Deps' repositories: every method refuses (a rejected promise) inside a transaction's callback. */
  guard<R extends object>(repos: R): R;
  /** deps.db.transaction: `fn` gets a Tx and runs in the scope; refuses inside another one's callback. */
  transaction: DataStore["transaction"];
}

export function createTransactionScope(store: EngineStore, parts: Omit<TxParts, "repos">): TransactionScope {
  const scopes = new AsyncLocalStorage<{ open: boolean }>();
  const refusal = (what: string, advice: string) =>
    new TransactionScopeError(`${what} called inside deps.db.transaction: ${advice} (the callback's tx.repos)`);

  return {
    guard<R extends object>(repos: R): R {
      return wrapRepoMethods(repos, (method, repo, repoName, methodName) => (...args) =>
        scopes.getStore()?.open
          ? Promise.reject(refusal(`deps.repos.${repoName}.${methodName}`, "use the transaction's repositories"))
          : method.apply(repo, args),
      );
    },
    transaction(fn, opts) {
      // SQLite: the nested one would queue behind this one forever; PostgreSQL: another connection.
      if (scopes.getStore()?.open) return Promise.reject(refusal("deps.db.transaction", "transactions do not nest; use the transaction's repositories"));
      return store.transaction(async (repos) => {
        const scope = { open: true };
        const tx = { ...parts, repos } as TxParts as Tx; // the brand: only here
        try {
          return await scopes.run(scope, () => fn(tx));
        } finally {
          scope.open = false;
        }
      }, opts);
    },
  };
}
