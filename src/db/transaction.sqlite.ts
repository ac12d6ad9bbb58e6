// DataStore.transaction on SQLite. One connection serves every request of the process, so while a
// transaction is open the other requests' statements would run inside it (reading its uncommitted
// rows, or failing to start their own). The gate makes them wait: Deps gets gated repositories,
// the transaction's callback gets the ungated ones. SQLite has one writer per file anyway, so
// queueing writers here costs no concurrency; readers wait only while a transaction is open.
// The callback itself must not wait here (it would wait for itself): a gated repository or a
// nested transaction called from it is refused first (db/transaction-scope.ts).
// The other way round, a transaction waits for the gated calls already under way: a repository
// written once for both engines (repo.sql.ts) awaits between its statements, so a call that began
// before the transaction would otherwise run its later statements inside it. New calls wait from
// the moment the transaction's turn comes, so a steady stream of them cannot starve it.
import { setDurableCommits, type DbHandle } from "./client";
import { wrapRepoMethods } from "./wrap-repos";

export interface SqliteGate {
  /** Wraps every method of every repository so that it waits while a transaction is open. */
  gate<R extends object>(repos: R): R;
  /**
   * Runs `fn` between BEGIN IMMEDIATE and COMMIT (ROLLBACK when it throws), one at a time; `durable`
   * syncs this commit to disk (synchronous=FULL for it, NORMAL again after).
   */
  run<T>(fn: () => Promise<T>, opts?: { durable?: boolean }): Promise<T>;
}

export function createSqliteGate(handle: DbHandle): SqliteGate {
  let open = false;
  let idle: Promise<void> = Promise.resolve();
  let queue: Promise<unknown> = Promise.resolve();
  // Gated calls under way, and the transaction waiting for them to settle.
  let inflight = 0;
  let drained: (() => void) | null = null;
  const settled = () => {
    if (--inflight === 0 && drained) drained();
  };
  const track = (out: unknown) => {
    if (!(out instanceof Promise)) return out;
    inflight++;
    return out.finally(settled);
  };

  const waitWhileOpen = async () => {
    while (open) await idle;
  };

  return {
    gate<R extends object>(repos: R): R {
      return wrapRepoMethods(repos, (method, repo) => (...args) =>
        // No transaction open (the usual case): the call goes straight through, no extra tick.
        open ? waitWhileOpen().then(() => track(method.apply(repo, args))) : track(method.apply(repo, args)),
      );
    },
    run<T>(fn: () => Promise<T>, opts: { durable?: boolean } = {}): Promise<T> {
      const turn = queue.then(async () => {
        let release!: () => void;
        idle = new Promise<void>((r) => (release = r));
        open = true;
        if (inflight > 0) await new Promise<void>((r) => (drained = r));
        drained = null;
        // Set while the gate is closed: no other statement commits under it.
        if (opts.durable) setDurableCommits(handle.sqlite, true);
        try {
          handle.sqlite.exec("BEGIN IMMEDIATE");
          try {
            const out = await fn();
            handle.sqlite.exec("COMMIT");
            return out;
          } catch (e) {
            if (handle.sqlite.inTransaction) handle.sqlite.exec("ROLLBACK");
            throw e;
          }
        } finally {
          if (opts.durable) setDurableCommits(handle.sqlite, false);
          open = false;
          release();
        }
      });
      queue = turn.catch(() => undefined);
      return turn;
    },
  };
}
