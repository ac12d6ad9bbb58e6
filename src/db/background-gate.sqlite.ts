// Turns for the background writers of one SQLite node: the outbox delivery on the serving thread and
// the lifecycle pass on its own thread (jobs/pass-thread.ts) write to the same file through two
// connections. SQLite lets one write at a time, and bun:sqlite waits for the lock synchronously, in
// the steps of SQLite's busy handler (1, 2, 5, 10 … ms): a delivery write that met the pass's
// transaction held the serving thread for that long (measured at a million licenses: verify p99
// 27 ms during the pass instead of 4). So the two never meet at the lock: they take turns through a
// word of shared memory. The serving thread takes the turn for each synchronous write and waits for
// it asynchronously (Atomics.waitAsync) while the pass's thread holds it; the pass's thread takes it
// for each transaction and waits for it with Atomics.wait, a wait of its own thread only. Neither
// waits for the other's event loop, so a busy serving thread does not slow the pass down.
//
// The same memory holds the checkpoint thread's pause (db/checkpointer.sqlite.ts): while it starts
// the WAL over, neither takes a new turn. Requests never wait on the gate.
import type { Checkpointer } from "./checkpointer.sqlite";

/** Indexes into the shared Int32Array. */
const OWNER = 0;
const PAUSED = 1;
/** OWNER values. */
const FREE = 0;
const SERVING = 1;
const THREAD = 2;

/** Atomics.waitAsync (ES2024; Bun has it, TypeScript's lib here does not name it). */
const waitAsync = (Atomics as unknown as { waitAsync(a: Int32Array, i: number, v: number, ms: number): { value: Promise<string> | string } }).waitAsync;

/** How long one wait lasts before the state is looked at again (a missed notify costs at most this). */
const RECHECK_MS = 20;

export interface BackgroundGate {
  /**
   * Runs a background writer's synchronous write in a turn of its own, once no other thread holds
   * the turn and the checkpoint thread is not starting the WAL over.
   */
  write<T>(fn: () => T): Promise<T>;
  /** The memory the turns are taken in, for another thread's gate (threadGate). */
  readonly shared: SharedArrayBuffer;
  /** Set by the checkpoint thread's pause and resume (openDatabase wires it). */
  setPaused(paused: boolean): void;
}

/** The serving thread's gate. */
export function createBackgroundGate(checkpointer: () => Checkpointer | null): BackgroundGate {
  const shared = new SharedArrayBuffer(8);
  const word = new Int32Array(shared);
  return {
    shared,
    async write(fn) {
      for (;;) {
        const paused = checkpointer()?.backgroundWrite();
        if (paused) {
          await paused;
          continue;
        }
        if (Atomics.compareExchange(word, OWNER, FREE, SERVING) === FREE) {
          try {
            return fn();
          } finally {
            Atomics.store(word, OWNER, FREE);
            Atomics.notify(word, OWNER);
          }
        }
        // The other thread's turn: wait for it to end without holding this thread's event loop.
        await waitAsync(word, OWNER, THREAD, RECHECK_MS).value;
      }
    },
    setPaused(paused) {
      Atomics.store(word, PAUSED, paused ? 1 : 0);
      Atomics.notify(word, PAUSED);
    },
  };
}

/**
 * Another thread's gate on the same memory (the lifecycle thread): `write` blocks that thread, never
 * the serving one, until its turn comes, and hands the turn back once `fn` has returned.
 */
export function threadGate(shared: SharedArrayBuffer): BackgroundGate {
  const word = new Int32Array(shared);
  const take = () => {
    for (;;) {
      if (Atomics.load(word, PAUSED) === 1) {
        Atomics.wait(word, PAUSED, 1, RECHECK_MS);
        continue;
      }
      const owner = Atomics.compareExchange(word, OWNER, FREE, THREAD);
      if (owner === FREE) {
        // A pause that began in between: give the turn back and wait for it to end.
        if (Atomics.load(word, PAUSED) !== 1) return;
        give();
        continue;
      }
      Atomics.wait(word, OWNER, owner, RECHECK_MS);
    }
  };
  const give = () => {
    Atomics.store(word, OWNER, FREE);
    Atomics.notify(word, OWNER);
  };
  return {
    shared,
    async write(fn) {
      take();
      try {
        return fn();
      } finally {
        give();
      }
    },
    setPaused() {
      throw new Error("the checkpoint thread's pause is set by the serving thread");
    },
  };
}
