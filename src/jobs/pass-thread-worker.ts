// The lifecycle thread (jobs/pass-thread.ts): opens its own connection, runs one lifecycle pass with
// the serving thread's rules and reports its counts, then closes the connection. The protocol is
// described in pass-thread.ts.
import { openDatabase, type DbHandle } from "../db/client";
import { threadGate } from "../db/background-gate.sqlite";
import { createLogger } from "../shared/logger";
import { lowerThisThreadPriority } from "../shared/thread-priority";
import { loadMasterKey, secretsFromMaster } from "../modules/keys/secrets";
import { createLifecycleRepo } from "../modules/lifecycle/repo.sqlite";
import { createSettingsRepo } from "../modules/settings/repo.sql";
import { sqliteQueryDialect } from "../db/dialect/query.sqlite";
import { runLifecycle, type LifecycleDeps } from "../modules/lifecycle/service";
import type { LifecycleRepo } from "../modules/lifecycle/repo";
import type { PassThreadIn, PassThreadOut, PassThreadSetup } from "./pass-thread";

declare const self: Worker;

const post = (msg: PassThreadOut) => self.postMessage(msg);

const abort = new AbortController();

/** Tells the serving thread when a transaction wrote something (its delivery worker then looks at once). */
function reporting(repo: LifecycleRepo): LifecycleRepo {
  return Object.assign(Object.create(repo) as LifecycleRepo, {
    async apply(...args: Parameters<LifecycleRepo["apply"]>) {
      const done = await repo.apply(...args);
      if (done.some(Boolean)) post("wrote");
      return done;
    },
  });
}

async function open(setup: PassThreadSetup, logger: ReturnType<typeof createLogger>): Promise<{ deps: LifecycleDeps; close: () => Promise<void> }> {
  const secrets = secretsFromMaster(loadMasterKey(setup, logger));
  if (setup.databaseUrl) {
    // Loaded only on PostgreSQL (the SQLite thread never needs postgres.js).
    const { openPostgres } = await import("../db/pg");
    const { createLifecycleRepoPg } = await import("../modules/lifecycle/repo.pg");
    const { pgQueryDialect } = await import("../db/dialect/query.pg");
    // Two connections: the pass runs one statement or transaction at a time (a walk's settings and
    // its page query are pipelined on one).
    const pg = openPostgres(setup.databaseUrl, {
      max: 2,
      timeouts: { lockMs: setup.databaseLockTimeoutMs, idleMs: setup.databaseIdleInTransactionTimeoutMs },
      stallMs: setup.databaseStallTimeoutMs,
    });
    return {
      deps: { repos: { lifecycle: reporting(createLifecycleRepoPg(pg)), settings: createSettingsRepo(pgQueryDialect(pg)) }, secrets },
      close: () => pg.close(),
    };
  }
  const handle: DbHandle = openDatabase(setup.databasePath, { mmapSize: setup.sqliteMmapSize, analyzeAtOpen: false });
  // The serving connection's checkpoint thread checkpoints the WAL; this connection's commits must not
  // (a checkpoint in a commit is what the thread is there to avoid).
  if (setup.checkpointThread) handle.sqlite.exec("PRAGMA wal_autocheckpoint = 0");
  // Each transaction a turn of the node's background writers (db/background-gate.sqlite.ts).
  if (setup.turns) handle.backgroundGate = threadGate(setup.turns);
  return {
    deps: { repos: { lifecycle: reporting(createLifecycleRepo(handle)), settings: createSettingsRepo(sqliteQueryDialect(handle)) }, secrets },
    // Not handle.close(): its final TRUNCATE checkpoint would hold the write lock while it waits for
    // the serving connection's readers, and the serving thread's writers would wait on it.
    close: async () => handle.sqlite.close(),
  };
}

/** The error's message, with its cause's (drizzle wraps a driver's error in "Failed query: …"). */
function describe(e: unknown): string {
  if (!(e instanceof Error)) return String(e);
  const cause = e.cause instanceof Error ? e.cause.message : null;
  return cause ? `${e.message.split("\n")[0]}: ${cause}` : e.message;
}

async function run(setup: PassThreadSetup, nowMs: number): Promise<void> {
  const logger = createLogger(setup.logLevel, (line) => {
    const { level, msg, time: _time, ...fields } = JSON.parse(line) as { level: "debug" | "info" | "warn" | "error"; msg: string; time: string };
    post({ type: "log", level, msg, fields });
  });
  let opened: Awaited<ReturnType<typeof open>> | null = null;
  if (setup.backgroundPriority === "idle" && !setup.databaseUrl) {
    // On SQLite the pass's work is this thread's CPU (the statements run in it): it runs on what
    // requests leave (shared/thread-priority.ts). On PostgreSQL the work is the server's and this
    // thread mostly waits for it; lowered, it only answered later between statements, holding its
    // transaction's row locks longer (measured: a pass of 182 s instead of 148, verify p99 no better).
    const outcome = lowerThisThreadPriority();
    if (outcome.lowered) logger.debug("the lifecycle thread runs at idle priority", { tid: outcome.tid });
    else logger.debug("the lifecycle thread keeps its priority", { reason: outcome.reason });
  }
  try {
    opened = await open(setup, logger);
    const counts = await runLifecycle(opened.deps, new Date(nowMs), { signal: abort.signal });
    await opened.close();
    opened = null;
    post({ type: "done", counts });
  } catch (e) {
    await opened?.close().catch(() => {});
    post({ type: "failed", message: describe(e) });
  }
}

self.onmessage = (event: MessageEvent) => {
  const msg = event.data as PassThreadIn;
  if (msg === "abort") abort.abort(new Error("the node is shutting down"));
  else if (msg.type === "run") void run(msg.setup, msg.nowMs);
};
