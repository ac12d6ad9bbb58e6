// Turns for the background writers of one SQLite node: the outbox delivery on the serving thread and
// the lifecycle pass on its own thread (jobs/pass-thread.ts) write to the same file through two
// connections. SQLite lets one write at a time, and bun:sqlite waits for the lock synchronously, in
// the steps of SQLite's busy handler (1, 2, 5, 10 … ms): a delivery write that met the pass's
// transaction held the serving thread for that long (measured at a million licenses: verify p99
// 27 ms during the pass instead of 4). So the two never meet at the lock: the pass's thread asks
// the serving thread for a turn before each transaction and hands it back after (acquire), and
// while it holds one, the serving thread's background writers wait for it asynchronously (write).
//
// The gate also holds them while the checkpoint thread starts the WAL over (db/checkpointer.sqlite.ts).
// Requests never wait on it.
import type { Checkpointer } from "./checkpointer.sqlite";

export interface BackgroundGate {
  /**
   * Runs a background writer's synchronous write once neither the checkpoint thread's pause nor
   * another thread's turn is in the way.
   */
  write<T>(fn: () => T): Promise<T>;
  /** A turn for another thread's writer: settles when it may write; call the release it returns after its commit. */
  acquire(): Promise<() => void>;
}

export function createBackgroundGate(checkpointer: () => Checkpointer | null): BackgroundGate {
  let turn: Promise<void> | null = null;
  // What is in the way now, if anything. Checked again after every wait, and acted on in the same
  // synchronous step as the check, so two waiters woken together never both go ahead.
  const blocked = () => turn ?? checkpointer()?.backgroundWrite() ?? null;
  return {
    async write(fn) {
      // The common case (no pause, no turn out) writes without a microtask in between.
      for (let b = blocked(); b; b = blocked()) await b;
      return fn();
    },
    async acquire() {
      for (let b = blocked(); b; b = blocked()) await b;
      let end!: () => void;
      const mine = new Promise<void>((resolve) => (end = resolve));
      turn = mine;
      return () => {
        if (turn === mine) turn = null;
        end();
      };
    },
  };
}

/** A gate with no pause and no other thread: writes at once (a connection of its own, one-shot commands). */
export const OPEN_GATE: BackgroundGate = {
  write: async (fn) => fn(),
  acquire: async () => () => {},
};
