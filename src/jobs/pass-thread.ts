// The lifecycle pass on a thread of its own (a serving node: cli.ts serve). The pass reads and writes
// many thousands of licenses at a million (docs/performance.md); on the event loop that serves
// requests, every page's query, every planned action and every transaction is time that verifies
// wait behind. On its own thread, with its own connection (SQLite: a second connection to the same
// file, as a second process would open; PostgreSQL: a pool of its own), it costs the serving thread
// only the messages below.
//
// The thread runs the same verb (modules/lifecycle/service.ts runLifecycle) on the same rules: every
// action is guarded in its transaction, so a pass here and one on another node never act twice.
// The job's lease, its record and the admin routes stay on the serving thread (jobs/runner.ts).
//
// On SQLite each transaction of the pass is a turn of the node's background writers, taken in shared
// memory (db/background-gate.sqlite.ts): the pass and this thread's outbox delivery never wait for
// each other at SQLite's lock, the pass holds back while the checkpoint thread starts the WAL over,
// and neither waits for the other's event loop.
//
// Messages out (to the thread): { type: "run", setup, nowMs }; "abort".
// Messages in: "wrote" (a transaction committed something: wake this node's delivery worker);
// { type: "log", … }; { type: "done", counts } or { type: "failed", message }, after which the
// thread has closed its connection and ends.
import type { Config } from "../config";
import type { BackgroundGate } from "../db/background-gate.sqlite";
import type { Logger } from "../shared/logger";
import type { LifecycleCounts } from "../modules/lifecycle/domain";

/** What the thread needs of the node's configuration (the rest of Config stays on the serving thread). */
export type PassThreadSetup = Pick<
  Config,
  | "dataDir"
  | "databasePath"
  | "databaseUrl"
  | "sqliteMmapSize"
  | "databaseLockTimeoutMs"
  | "databaseIdleInTransactionTimeoutMs"
  | "databaseStallTimeoutMs"
  | "masterKeyHex"
  | "logLevel"
  | "backgroundPriority"
> & {
  /** SQLite: whether the serving connection has the checkpoint thread (then the pass's connection leaves checkpoints to it). */
  checkpointThread: boolean;
  /** SQLite: the memory of the node's background-writer turns (BackgroundGate.shared). */
  turns: SharedArrayBuffer | null;
};

export type PassThreadIn = { type: "run"; setup: PassThreadSetup; nowMs: number } | "abort";
export type PassThreadOut =
  | "wrote"
  | { type: "log"; level: "debug" | "info" | "warn" | "error"; msg: string; fields: Record<string, unknown> }
  | { type: "done"; counts: LifecycleCounts }
  | { type: "failed"; message: string };

export interface PassThreads {
  /** Runs one lifecycle pass at `now` on a new thread; rejects when it fails or `signal` stops it. */
  lifecycle(now: Date, signal?: AbortSignal): Promise<LifecycleCounts>;
}

export interface PassThreadOptions {
  config: Readonly<Config>;
  logger: Logger;
  /** SQLite: the serving connection's background-writer turns (db/background-gate.sqlite.ts); null on PostgreSQL. */
  gate: BackgroundGate | null;
  /** SQLite: whether the serving connection has the checkpoint thread. */
  checkpointThread: boolean;
  /** Wakes this node's delivery worker after the pass wrote emails or events. */
  nudge: () => void;
  /** Runs the pass on the calling thread: used when no thread can be started (it is logged). */
  inProcess: (now: Date, signal?: AbortSignal) => Promise<LifecycleCounts>;
}

/**
 * The thread's entry point. Inside the executable every chunk sits at the root of its embedded file
 * system and the worker, an entry point of its own (scripts/build.ts), below it at the path it has
 * under src/; run from source it is this file's neighbour.
 */
function workerUrl(): URL {
  const embedded = import.meta.url.includes("/$bunfs/");
  return new URL(embedded ? "./jobs/pass-thread-worker.ts" : "./pass-thread-worker.ts", import.meta.url);
}

export function setupOf(config: Readonly<Config>, checkpointThread: boolean, turns: SharedArrayBuffer | null): PassThreadSetup {
  return {
    dataDir: config.dataDir,
    databasePath: config.databasePath,
    databaseUrl: config.databaseUrl,
    sqliteMmapSize: config.sqliteMmapSize,
    databaseLockTimeoutMs: config.databaseLockTimeoutMs,
    databaseIdleInTransactionTimeoutMs: config.databaseIdleInTransactionTimeoutMs,
    databaseStallTimeoutMs: config.databaseStallTimeoutMs,
    masterKeyHex: config.masterKeyHex,
    logLevel: config.logLevel,
    backgroundPriority: config.backgroundPriority,
    checkpointThread,
    turns,
  };
}

export function createPassThreads(opts: PassThreadOptions): PassThreads {
  const setup = setupOf(opts.config, opts.checkpointThread, opts.gate?.shared ?? null);
  return {
    lifecycle(now, signal) {
      signal?.throwIfAborted();
      let worker: Worker;
      try {
        worker = new Worker(workerUrl(), { smol: true } as WorkerOptions);
      } catch (e) {
        opts.logger.warn("cannot start the lifecycle thread; the pass runs on the serving thread", { error: (e as Error).message });
        return opts.inProcess(now, signal);
      }
      return new Promise<LifecycleCounts>((resolve, reject) => {
        let settled = false;
        const finish = (fn: () => void) => {
          if (settled) return;
          settled = true;
          signal?.removeEventListener("abort", onAbort);
          worker.terminate();
          fn();
        };
        const onAbort = () => worker.postMessage("abort" satisfies PassThreadIn);
        signal?.addEventListener("abort", onAbort, { once: true });
        worker.onmessage = (event: MessageEvent) => {
          const msg = event.data as PassThreadOut;
          if (msg === "wrote") opts.nudge();
          else if (msg.type === "log") opts.logger[msg.level](msg.msg, { ...msg.fields, thread: "lifecycle" });
          else if (msg.type === "done") finish(() => resolve(msg.counts));
          else finish(() => reject(signal?.aborted ? signal.reason : new Error(msg.message)));
        };
        worker.onerror = (event: ErrorEvent) => finish(() => reject(new Error(`the lifecycle thread failed: ${event.message}`)));
        worker.postMessage({ type: "run", setup, nowMs: now.getTime() } satisfies PassThreadIn);
      });
    },
  };
}
