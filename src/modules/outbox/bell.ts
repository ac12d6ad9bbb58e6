// The in-process wake-up of the delivery worker (jobs/delivery-worker.ts) on SQLite: the writers of
// outbox messages and webhook deliveries ring it, and the worker listening on this process picks the
// new rows up at once instead of at its next poll. On PostgreSQL the writers NOTIFY instead
// (write.pg.ts), which reaches every node at commit.
//
// A ring is only a hint, never the record: the rows are in the database, and every node's worker
// also polls (one indexed statement a second), which is what another process on the same SQLite file
// relies on. A ring inside a transaction that then rolls back costs one empty poll. A ring before the
// commit is harmless on SQLite too: the worker reads through Deps' repositories, which wait while a
// DataStore.transaction is open (db/transaction.sqlite.ts), and `immediate()` transactions are
// synchronous, so the listeners (called on a later tick) run after them.

type Listener = () => void;
const listeners = new Set<Listener>();
let pending = false;

/** Wakes every listening worker of this process, once per tick however many rows were written. */
export function ringDeliveryBell(): void {
  if (pending || listeners.size === 0) return;
  pending = true;
  queueMicrotask(() => {
    pending = false;
    for (const l of listeners) l();
  });
}

/** Calls `listener` on every ring until the returned function is called. */
export function onDeliveryBell(listener: Listener): () => void {
  listeners.add(listener);
  return () => void listeners.delete(listener);
}
