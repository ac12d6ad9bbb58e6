// WAL checkpoints off the event loop (issue 26). bun:sqlite runs every statement on the thread that
// calls it, and by default SQLite checkpoints inside the commit that takes the WAL past 1000 pages:
// that commit then copies ~4 MB back into the database and syncs it, 30-60 ms during which no
// request of the node is served (seen as the worst apply of a lifecycle pass, and as its verify p99).
//
// A serving node turns the automatic checkpoint off on its connection (PRAGMA wal_autocheckpoint=0)
// and, once the WAL file has grown past that same size, starts one worker thread
// (checkpoint-worker.sqlite.ts) whose own connection checkpoints every CHECKPOINT_INTERVAL_MS. To start
// the WAL over (so the file stays a few MB) the thread briefly holds the node's background writers
// (backgroundWrite(): the lifecycle pass and outbox delivery await it before each transaction);
// requests are never held. A node that never writes that much (most idle ones) never starts the
// thread. If the thread cannot run, the connection goes back to automatic checkpoints and says so.
import type { Database } from "bun:sqlite";
import { statSync } from "node:fs";
import type { Logger } from "../shared/logger";

/** SQLite's default automatic checkpoint, in pages (PRAGMA wal_autocheckpoint). */
export const AUTOCHECKPOINT_PAGES = 1000;
/** How often the thread checkpoints once started. */
export const CHECKPOINT_INTERVAL_MS = 200;
/** Longest a background writer is held while the thread restarts the WAL. */
const PAUSE_LIMIT_MS = 2000;
/** How often the WAL file's size is looked at until the thread starts (one stat call). */
const POLL_MS = 1000;

export interface CheckpointerStats {
  /** Whether the worker thread is running. */
  running: boolean;
  /** Checkpoints that copied frames since the thread started; the WAL's length at the last one, in frames. */
  checkpoints: number;
  walFrames: number;
  /** Times background writers were held while the thread restarted the WAL. */
  pauses: number;
  /** The thread's id when it moved itself to idle priority (idlePriority, Linux); null otherwise. */
  idleTid: number | null;
}

export interface Checkpointer {
  stats(): CheckpointerStats;
  /**
   * What a background writer (the lifecycle pass, outbox delivery) awaits before each transaction:
   * null at once, or a promise while the thread restarts the WAL (settled within PAUSE_LIMIT_MS).
   * Requests never wait on it.
   */
  backgroundWrite(): Promise<void> | null;
  /** Stops the thread (its connection closes on its own thread) and the polling. */
  stop(): void;
}

export interface CheckpointerOptions {
  logger?: Pick<Logger, "warn">;
  /** WAL size that starts the thread; default AUTOCHECKPOINT_PAGES pages of the database. */
  thresholdBytes?: number;
  pollMs?: number;
  intervalMs?: number;
  /** Moves the thread to the idle scheduling class (BACKGROUND_PRIORITY=idle: shared/thread-priority.ts). */
  idlePriority?: boolean;
  /** Told when background writers are held (true) and let go (false): the gate's shared pause (db/background-gate.sqlite.ts). */
  onPause?: (paused: boolean) => void;
}

/**
 * The thread's entry point. Inside the executable every chunk sits at the root of its embedded file
 * system and the worker, an entry point of its own (scripts/build.ts), below it at the path it has
 * under src/; run from source it is this file's neighbour. (test/process/binary.test.ts starts it.)
 */
function workerUrl(): URL {
  const embedded = import.meta.url.includes("/$bunfs/");
  return new URL(embedded ? "./db/checkpoint-worker.sqlite.ts" : "./checkpoint-worker.sqlite.ts", import.meta.url);
}

export function startCheckpointer(sqlite: Database, path: string, opts: CheckpointerOptions = {}): Checkpointer {
  const pageSize = (sqlite.query("PRAGMA page_size").get() as { page_size: number }).page_size;
  const threshold = opts.thresholdBytes ?? AUTOCHECKPOINT_PAGES * pageSize;
  sqlite.exec("PRAGMA wal_autocheckpoint = 0");
  const stats: CheckpointerStats = { running: false, checkpoints: 0, walFrames: 0, pauses: 0, idleTid: null };
  let worker: Worker | null = null;
  let stopped = false;

  const fallBack = (why: string) => {
    worker?.terminate();
    worker = null;
    stats.running = false;
    resume();
    if (stopped) return;
    stopped = true;
    try {
      sqlite.exec(`PRAGMA wal_autocheckpoint = ${AUTOCHECKPOINT_PAGES}`);
    } catch {
      // The connection is closing.
    }
    opts.logger?.warn("sqlite checkpoint thread stopped; commits checkpoint the WAL themselves again", { reason: why });
  };

  // Background writers wait here while the thread restarts the WAL ("pause" … "resume"), at most
  // PAUSE_LIMIT_MS (a thread that never answers must not stop them).
  let gate: { promise: Promise<void>; open: () => void } | null = null;
  const pause = () => {
    // After stop() a late "pause" from the thread must not hold the writers of a closing node.
    if (gate || stopped) return;
    let open!: () => void;
    const promise = new Promise<void>((resolve) => (open = resolve));
    const limit = setTimeout(() => resume(), PAUSE_LIMIT_MS);
    limit.unref();
    gate = {
      promise,
      open: () => {
        clearTimeout(limit);
        open();
      },
    };
    stats.pauses++;
    opts.onPause?.(true);
  };
  const resume = () => {
    const g = gate;
    gate = null;
    if (g) opts.onPause?.(false);
    g?.open();
  };

  const start = () => {
    try {
      worker = new Worker(workerUrl(), { smol: true } as WorkerOptions);
    } catch (e) {
      fallBack((e as Error).message);
      return;
    }
    worker.unref();
    stats.running = true;
    worker.onmessage = (event: MessageEvent) => {
      const msg = event.data as { checkpoints: number; walFrames: number } | { idleTid: number } | { error: string } | "pause" | "resume" | "closed";
      if (msg === "pause") {
        pause();
        // Answered between two tasks of this thread: every background write after this awaits the gate.
        if (gate) worker?.postMessage("held");
      } else if (msg === "resume") resume();
      else if (msg === "closed") {
        worker?.terminate();
        worker = null;
        stats.running = false;
      } else if ("error" in msg) fallBack(msg.error);
      else Object.assign(stats, msg);
    };
    worker.onerror = (event: ErrorEvent) => fallBack(event.message);
    worker.postMessage({ path, idlePriority: opts.idlePriority === true, intervalMs: opts.intervalMs ?? CHECKPOINT_INTERVAL_MS, restartFrames: Math.max(1, Math.floor(threshold / pageSize)) });
  };

  const walPath = `${path}-wal`;
  const poll = setInterval(() => {
    const size = statSync(walPath, { throwIfNoEntry: false })?.size ?? 0;
    if (size < threshold) return;
    clearInterval(poll);
    start();
  }, opts.pollMs ?? POLL_MS);
  poll.unref();

  return {
    stats: () => ({ ...stats }),
    backgroundWrite: () => gate?.promise ?? null,
    stop() {
      if (stopped) return;
      stopped = true;
      clearInterval(poll);
      resume();
      if (worker) worker.postMessage("stop");
    },
  };
}
