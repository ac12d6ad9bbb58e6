// drizzle over bun:sqlite. Pragmas: WAL for concurrent readers, busy_timeout so writers queue instead
// of failing, foreign keys on, synchronous=NORMAL (durable at checkpoints; FULL for the commits that ask for it).
import { Database } from "bun:sqlite";
import { drizzle, type BunSQLiteDatabase } from "drizzle-orm/bun-sqlite";
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import * as schema from "./schema";
import type { DataStore } from "./store";
import { isSqliteBusyCode } from "./errors";
import { startCheckpointer, type Checkpointer, type CheckpointerOptions } from "./checkpointer.sqlite";
import { createBackgroundGate, type BackgroundGate } from "./background-gate.sqlite";

export type Db = BunSQLiteDatabase<typeof schema> & { $client: Database };

/** The SQLite engine's handle: the DataStore plus the connection its repositories use. */
export interface DbHandle extends Pick<DataStore, "ping" | "close"> {
  readonly engine: "sqlite";
  db: Db;
  sqlite: Database;
  /** The WAL checkpoint thread, when openDatabase was asked for it (db/checkpointer.sqlite.ts). */
  checkpointer: Checkpointer | null;
  /** Turns for background writers (outbox delivery, the lifecycle pass): db/background-gate.sqlite.ts. */
  backgroundGate: BackgroundGate;
  /** Closes at once (synchronously); the returned promise is already settled. */
  close(): Promise<void>;
}

/**
 * The connection's sync level: in WAL mode NORMAL syncs at checkpoints, not at every commit, so a
 * commit survives a crash of the process but may be lost to a power loss or an OS crash. Commits
 * that must not be (DataStore.transaction with `durable`) switch to FULL for themselves.
 */
const SYNCHRONOUS = "NORMAL";

/** How long a write waits for another process's write lock before SQLITE_BUSY (bun:sqlite waits synchronously). */
export const BUSY_TIMEOUT_MS = 5000;

/** Rows ANALYZE samples per index (PRAGMA analysis_limit); SQLite suggests a few hundred to 1000. */
const ANALYSIS_LIMIT = 1000;

/** Switches the connection to synchronous=FULL (`durable`) or back to SYNCHRONOUS. */
export function setDurableCommits(sqlite: Database, durable: boolean): void {
  sqlite.exec(`PRAGMA synchronous = ${durable ? "FULL" : SYNCHRONOUS}`);
}

export interface OpenOptions {
  /**
   * PRAGMA mmap_size: how many bytes of the file SQLite reads through a memory map (config
   * SQLITE_MMAP_SIZE). Reads of a page outside SQLite's own page cache are then memory accesses
   * instead of a pread() system call each; at a million licenses a verify read about 5 such pages
   * (docs/performance.md, "A million licenses"). 0: off (SQLite's default). Writes still go through
   * the WAL, whose pages are still read with pread(); SQLite caps the value at its build limit (2 GiB
   * in Bun's build).
   */
  mmapSize?: number;
  /**
   * Checkpoint the WAL on a thread of its own instead of in the commit that fills it (a serving
   * node: db/checkpointer.sqlite.ts). One-shot commands (migrate, copy, backup) keep SQLite's automatic
   * checkpoints.
   */
  checkpointThread?: boolean | CheckpointerOptions;
  /**
   * PRAGMA optimize=0x10002 at open (default true). The lifecycle thread's connection skips it: the
   * serving connection ran it at its own open, and an ANALYZE there would write outside the
   * background writers' turns (db/background-gate.sqlite.ts).
   */
  analyzeAtOpen?: boolean;
}

export function openDatabase(path: string, opts: OpenOptions = {}): DbHandle {
  if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true });
  const sqlite = new Database(path, { create: true, strict: true });
  sqlite.exec("PRAGMA journal_mode = WAL");
  if (opts.mmapSize !== undefined && path !== ":memory:") sqlite.exec(`PRAGMA mmap_size = ${Math.max(0, Math.floor(opts.mmapSize))}`);
  sqlite.exec(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
  sqlite.exec("PRAGMA foreign_keys = ON");
  setDurableCommits(sqlite, false);
  // Planner statistics: Keyward never ran ANALYZE, so every plan was chosen without them. SQLite's
  // advice for a long-lived connection (sqlite.org/lang_analyze.html, "Recommended usage pattern"):
  // PRAGMA optimize=0x10002 at open (also looks at tables this connection has not used yet), then
  // PRAGMA optimize now and then (after each lifecycle pass: lifecycle/repo.sqlite.ts) and at close.
  // analysis_limit bounds each ANALYZE to a sample, so none of them reads a million-row table whole.
  sqlite.exec(`PRAGMA analysis_limit = ${ANALYSIS_LIMIT}`);
  if (path !== ":memory:" && opts.analyzeAtOpen !== false) sqlite.exec("PRAGMA optimize = 0x10002");
  const db = drizzle({ client: sqlite, schema }) as Db;
  let checkpointer: Checkpointer | null = null;
  const backgroundGate = createBackgroundGate(() => checkpointer);
  if (opts.checkpointThread && path !== ":memory:") {
    const options = opts.checkpointThread === true ? {} : opts.checkpointThread;
    checkpointer = startCheckpointer(sqlite, path, { ...options, onPause: (paused) => (backgroundGate.setPaused(paused), options.onPause?.(paused)) });
  }
  let closed = false;
  const pingStmt = sqlite.query("SELECT 1");
  const handle: DbHandle = {
    engine: "sqlite",
    db,
    sqlite,
    checkpointer,
    backgroundGate,
    async ping() {
      pingStmt.get();
    },
    async close() {
      if (closed) return;
      closed = true;
      checkpointer?.stop();
      try {
        sqlite.exec("PRAGMA optimize");
      } catch {
        // Another process holds the write lock past busy_timeout: the statistics wait for next time.
      }
      try {
        sqlite.exec("PRAGMA wal_checkpoint(TRUNCATE)");
      } catch {
        // A checkpoint can fail while another connection reads; closing is still safe.
      }
      sqlite.close();
    },
  };
  return handle;
}

/**
 * A prepared statement built on its first use, then reused. Repositories are created at boot, but a
 * start serves its first request (the health check) with none of their statements: building ~20 of
 * them through drizzle's query builder up front cost ~8 ms of a ~60 ms start of the executable.
 * Usage: `const byId = lazyStatement(() => db.select()....prepare());` then `byId().get(...)`.
 */
export function lazyStatement<T>(prepare: () => T): () => T {
  let stmt: T | undefined;
  return () => (stmt ??= prepare());
}

/**
 * Runs `fn` in a synchronous IMMEDIATE transaction. bun:sqlite transactions are synchronous: an async
 * callback would commit at its first await and never roll back (drizzle #2275, #1472), so `fn` must
 * not return a promise. IMMEDIATE takes the write lock up front, so a read-then-write cannot fail
 * with SQLITE_BUSY_SNAPSHOT under contention.
 */
export function immediate<T>(handle: { sqlite: Database }, fn: () => T): T {
  const tx = handle.sqlite.transaction(() => {
    const out = fn();
    if (out instanceof Promise) throw new Error("immediate(): callback must be synchronous");
    return out;
  });
  // Nested in an open transaction (a unit of work's) it is a savepoint, and the outer commit decides.
  return tx.immediate();
}

/**
 * Runs `write` without waiting for another process's write lock (busy_timeout 0 for its duration):
 * null when it ran, or the SQLITE_BUSY error it met instead, with nothing written. bun:sqlite waits
 * for a lock synchronously, so a wait holds up every request of this process; a caller that can
 * wait asynchronously (put the write off, answer later) or not at all uses this.
 */
export function writeOrBusy(sqlite: Database, write: () => void): Error | null {
  sqlite.exec("PRAGMA busy_timeout = 0");
  try {
    write();
    return null;
  } catch (error) {
    const code = (error as { code?: unknown } | null)?.code;
    if (typeof code === "string" && isSqliteBusyCode(code)) return error as Error;
    throw error;
  } finally {
    sqlite.exec(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
  }
}

/**
 * A best-effort write (a last-seen timestamp) that does not wait for another process's write lock:
 * false, with nothing written, when the database is locked. Waiting would hold up every request of
 * this process for up to BUSY_TIMEOUT_MS, and then fail the request that only wanted to note a time.
 */
export function writeUnlessLocked(sqlite: Database, write: () => void): boolean {
  return writeOrBusy(sqlite, write) === null;
}

/**
 * A synchronous SQLite read as a repository method: repositories are async (the PostgreSQL set must
 * await its driver), but the SQLite set keeps its statements synchronous so they can run inside
 * `immediate()` transactions; `lift` exposes such a helper under the async contract.
 */
export function lift<A extends unknown[], R>(fn: (...args: A) => R): (...args: A) => Promise<R> {
  return async (...args: A) => fn(...args);
}
