// drizzle over postgres.js, for DATABASE_URL=postgres://… (the SQLite counterpart is client.ts).
// One pool per process; every node of a deployment opens its own.
import postgres from "postgres";
import { drizzle, type PostgresJsDatabase } from "drizzle-orm/postgres-js";
import * as schema from "./schema-pg";

/** PostgreSQL `bigint` (int8, oid 20) as a JS number: counters, sizes and `count(*)` stay below 2^53. */
const BIGINT_AS_NUMBER = {
  to: 20,
  from: [20],
  serialize: (value: number) => String(value),
  parse: (raw: string) => Number(raw),
};

/**
 * PostgreSQL's text form of a timestamptz ("2026-11-21 08:00:00.123456+00", "1850-01-01 00:09:21+00:09:21"
 * under a server TimeZone with local mean time, "0044-03-15 12:00:00+00 BC") as RFC 3339 UTC with
 * milliseconds (microseconds truncated, as JavaScript dates do). drizzle leaves timestamps as text
 * and makes Dates with `new Date(text)`, whose lenient parser reads years 0001-0099 as 1950-2049 (a
 * license valid until 0001-01-01 came back valid until 2001) and gives an Invalid Date for offsets
 * with seconds (any instant before a zone adopted standard time, on a server whose TimeZone is not
 * UTC); it parses this function's output exactly. "infinity" and "-infinity" (which Keyward never
 * writes) pass through; any other form throws: the start-up check (assertSupportedServer) made sure
 * of ISO output, so another form means DateStyle changed under a running node, and a query that
 * fails loudly beats dates read with day and month swapped.
 */
const PG_TIMESTAMPTZ = /^(\d{4,})-(\d\d)-(\d\d) (\d\d):(\d\d):(\d\d)(?:\.(\d{1,6}))?([+-])(\d\d)(?::(\d\d))?(?::(\d\d))?( BC)?$/;
export function pgTimestamptzToIso(text: string): string {
  const m = PG_TIMESTAMPTZ.exec(text);
  if (!m) {
    if (text === "infinity" || text === "-infinity") return text;
    throw new Error(`PostgreSQL sent a timestamp in a form Keyward does not read ("${text}"): was DateStyle changed from ISO while this node ran?`);
  }
  const at = new Date(0);
  // setUTCFullYear, not Date.UTC, which also reads years 0-99 as 1900-1999. Year 1 BC is year 0.
  at.setUTCFullYear(m[12] ? 1 - Number(m[1]) : Number(m[1]), Number(m[2]) - 1, Number(m[3]));
  at.setUTCHours(Number(m[4]), Number(m[5]), Number(m[6]), m[7] ? Number(m[7].slice(0, 3).padEnd(3, "0")) : 0);
  const offsetSeconds = (m[8] === "-" ? -1 : 1) * (Number(m[9]) * 3600 + Number(m[10] ?? 0) * 60 + Number(m[11] ?? 0));
  return new Date(at.getTime() - offsetSeconds * 1000).toISOString();
}

/** A PostgreSQL server or database Keyward refuses to run on (assertSupportedServer). */
export class UnsupportedServerError extends Error {
  override name = "UnsupportedServerError";
}

/** The oldest PostgreSQL Keyward runs on (server_version_num). CI runs 15. */
export const MIN_SERVER_VERSION_NUM = 140000;

/** The settings assertSupportedServer reads. */
export interface ServerSettings {
  /** DateStyle, e.g. "ISO, MDY". */
  style: string;
  /** server_encoding, e.g. "UTF8". */
  encoding: string;
  /** server_version_num, e.g. 150020. */
  versionNum: number;
  /** standard_conforming_strings, "on" or "off". */
  standardStrings: string;
}

/** Why Keyward cannot run on a server with these settings, or null. */
export function unsupportedServerReason({ style, encoding, versionNum, standardStrings }: ServerSettings): string | null {
  // Before 14, extract(epoch …) is a double: the hot paths' (extract(epoch FROM t) * 1000)::float8
  // then reads 08:00:00.123 as …122.9999 ms, one millisecond early once truncated.
  if (versionNum < MIN_SERVER_VERSION_NUM) {
    return `PostgreSQL ${Math.floor(versionNum / 10000)} is not supported; Keyward needs PostgreSQL ${MIN_SERVER_VERSION_NUM / 10000} or later`;
  }
  if (!/^\s*ISO\b/i.test(style)) {
    return `PostgreSQL's DateStyle is "${style}", and Keyward reads timestamps in PostgreSQL's ISO output; set it for Keyward's database (ALTER DATABASE <name> SET DateStyle = 'ISO, MDY') or role, then start again`;
  }
  if (encoding.toUpperCase() !== "UTF8") {
    return `the database's encoding is ${encoding}, and Keyward stores UTF-8 text; create Keyward's database with ENCODING 'UTF8' (CREATE DATABASE keyward ENCODING 'UTF8' TEMPLATE template0), then start again`;
  }
  // Off, a backslash escapes inside '…': the searches' ESCAPE '\' becomes an unterminated literal.
  if (standardStrings !== "on") {
    return `PostgreSQL's standard_conforming_strings is ${standardStrings}, and Keyward's queries are written for on (the default since PostgreSQL 9.1); set it for Keyward's database (ALTER DATABASE <name> SET standard_conforming_strings = on), then start again`;
  }
  return null;
}

/**
 * Refuses a database Keyward cannot run on correctly, before it migrates anything, saying what to
 * change:
 * - PostgreSQL older than 14 (MIN_SERVER_VERSION_NUM);
 * - DateStyle other than ISO ("SQL, DMY" writes 2027-02-01 as "01/02/2027 00:00:00 UTC", read back as
 *   January 2nd; "German" writes "21.11.2026 …", an Invalid Date): pgTimestamptzToIso reads the ISO
 *   form only. "ISO, DMY" (what initdb picks for many locales) is ISO output: its second part only
 *   orders ambiguous input, which Keyward never sends.
 * - an encoding other than UTF8: Keyward stores UTF-8 text (names, labels, email templates); a
 *   LATIN1 database refuses "…" or "€" with 22P05, so the migrations themselves failed with
 *   "character with byte sequence 0xe2 0x80 0xa6 … has no equivalent in encoding LATIN1";
 * - standard_conforming_strings off (a legacy setting): the searches' LIKE … ESCAPE '\' then fails.
 */
export async function assertSupportedServer(sql: PgSql): Promise<void> {
  const [row] = await sql<{ style: string; encoding: string; version: string; strings: string }[]>`
    SELECT current_setting('DateStyle') AS style, current_setting('server_encoding') AS encoding,
           current_setting('server_version_num') AS version, current_setting('standard_conforming_strings') AS strings`;
  const reason = unsupportedServerReason({
    style: row?.style ?? "",
    encoding: row?.encoding ?? "",
    versionNum: Number(row?.version ?? 0),
    standardStrings: row?.strings ?? "",
  });
  if (reason) throw new UnsupportedServerError(reason);
}

/** postgres.js type oids whose text drizzle hands to `new Date`: timestamptz (1184). */
const TIMESTAMPTZ_OID = 1184;

export type PgSql = postgres.Sql<{ bigint: number }>;
export type PgDb = PostgresJsDatabase<typeof schema> & { $client: PgSql };
/** A drizzle PostgreSQL database or an open transaction on it. */
export type PgExecutor = Pick<PgDb, "insert" | "select" | "update" | "delete" | "execute">;

export interface PgHandle {
  /**
   * The postgres.js client. drizzle (below) makes it return timestamps as strings and send jsonb
   * parameters as given, so raw queries should cast (`::jsonb`, `::timestamptz`) and convert.
   */
  sql: PgSql;
  db: PgDb;
  /** Set on the handle DataStore.transaction gives its repositories (db and sql are its connection). */
  inTransaction?: boolean;
  /** Rejects when the database cannot answer (health check). */
  ping(): Promise<void>;
  /** Ends the pool, waiting up to 5 s for running queries; a second call does nothing. */
  close(): Promise<void>;
}

/**
 * How long a connection that closed on an error waits before it reconnects, by the pool's count of
 * such closes since its last successful connect. postgres.js's default grows as 3^n / 100 s up to
 * 20 s, and every connection of the pool that the server ends counts: after a restart or a failover
 * a pool of 10 would wait 10-20 s before it tried again. Here: 0.1 s doubling to at most 2 s, with
 * jitter, so a node is serving again at most about 2 s after its database is.
 */
export function reconnectDelaySeconds(closesSinceConnect: number): number {
  return (0.5 + Math.random() / 2) * Math.min(0.05 * 2 ** closesSinceConnect, 2);
}

/**
 * Limits every transaction of the pool sets on itself (SET LOCAL, so they hold behind a
 * transaction-mode pooler too): `lockMs` bounds a wait for a row lock (lock_timeout: the
 * transaction fails with 55P03, a 503, instead of waiting for ever on a session that holds it);
 * `idleMs` makes the server end a transaction left idle that long (idle_in_transaction_session_timeout:
 * a node that stalled or lost its network mid-transaction would otherwise keep its row locks until
 * TCP keepalive notices, two hours by default on Linux). Keyward's transactions only run statements
 * and in-process work (DECISIONS: Payments keeps Stripe calls outside them).
 */
export interface TransactionTimeouts {
  lockMs: number;
  idleMs: number;
}

/**
 * postgres.js options for `stallMs` (DATABASE_STALL_TIMEOUT_MS): `stall_timeout` is the driver's
 * watchdog added by scripts/patch-deps.mjs (repair 9): a connection with a statement outstanding
 * that hears nothing from the server for that long fails its statements with CONNECTION_STALLED
 * (a 503) and reconnects; without it a network partition holds every statement of the pool until
 * the kernel gives up, about 15 minutes. Opening a connection gets the same bound (postgres.js: 30 s).
 */
function stallOptions(stallMs: number | undefined): Record<string, number> {
  return stallMs ? { stall_timeout: stallMs / 1000, connect_timeout: stallMs / 1000 } : {};
}

/**
 * Runs a repository method's several statements as one: in the caller's unit of work when the handle
 * is a transaction's (DataStore.transaction: no savepoint round trips), otherwise in a transaction of
 * their own.
 */
export function atomically<T>(handle: PgHandle, fn: (tx: PgExecutor) => Promise<T>): Promise<T> {
  return handle.inTransaction ? fn(handle.db) : handle.db.transaction(fn);
}

export function openPostgres(
  url: string,
  opts: { max?: number; maxPipeline?: number; timeouts?: TransactionTimeouts; stallMs?: number } = {},
): PgHandle {
  const sql = postgres(url, {
    ...stallOptions(opts.stallMs),
    max: opts.max ?? 10,
    // Tests lower it to make a full pipeline easy to reach; postgres.js's default (100) otherwise.
    ...(opts.maxPipeline !== undefined ? { max_pipeline: opts.maxPipeline } : {}),
    // Notices ("relation already exists, skipping" from CREATE … IF NOT EXISTS) are not errors and
    // would otherwise go to console.log, outside the structured logger.
    onnotice: () => {},
    types: { bigint: BIGINT_AS_NUMBER },
    backoff: reconnectDelaySeconds,
  });
  // Every transaction (drizzle's db.transaction, sql.begin) on a connection of its own: see below.
  sql.begin = reservedBegin(sql, opts.timeouts ?? null);
  const db = drizzle({ client: sql, schema }) as PgDb;
  // After drizzle, which sets timestamptz to pass through as text (drizzle-orm/postgres-js driver).
  sql.options.parsers[TIMESTAMPTZ_OID] = pgTimestamptzToIso;
  let closing: Promise<void> | null = null;
  return {
    sql,
    db,
    async ping() {
      await sql`SELECT 1`;
    },
    close() {
      closing ??= sql.end({ timeout: 5 });
      return closing;
    },
  };
}

/**
 * The isolation of every transaction that does not ask for another: Keyward's rules are written for
 * READ COMMITTED (row locks, conditional writes that re-check the row they wait for). A database or
 * role whose default_transaction_isolation is REPEATABLE READ or SERIALIZABLE would otherwise make
 * concurrent activations, usage reports and floating checkouts of one license fail with
 * serialization errors (measured: 34 of 40 concurrent activations answered 503 under SERIALIZABLE).
 */
const DEFAULT_ISOLATION = "isolation level read committed";

/**
 * sql.begin, on a reserved connection. postgres.js's own begin sends BEGIN through the pool, which
 * may pipeline it onto a busy connection; when that connection's pipeline is full (or its socket
 * pushes back) the connection is never marked as the transaction's (porsager/postgres#823, #1204,
 * 3.4.x): the transaction fails with UNSAFE_TRANSACTION (a 500 here, seen once under the contention
 * bench), and the BEGIN that did run leaves the pooled connection inside a transaction that other
 * requests' statements then join, uncommitted. sql.reserve() hands out an idle connection only and
 * keeps every other query off it until release, so BEGIN, the callback's statements and COMMIT (or
 * ROLLBACK) all run on it alone. What postgres.js's begin gives its callback is kept: the same query
 * API, `savepoint(fn)` / `savepoint(name, fn)` (drizzle's nested transactions), ROLLBACK and the
 * error when the callback throws, the options string ("isolation level serializable").
 */
function reservedBegin(pool: PgSql, timeouts: TransactionTimeouts | null): PgSql["begin"] {
  // Sent with BEGIN in one simple-protocol message: no extra round trip.
  const limits = timeouts
    ? `; set local lock_timeout = ${Math.round(timeouts.lockMs)}; set local idle_in_transaction_session_timeout = ${Math.round(timeouts.idleMs)}`
    : "";
  async function begin(optionsOrFn: string | ((tx: never) => unknown), maybeFn?: (tx: never) => unknown): Promise<unknown> {
    const [options, fn] = typeof optionsOrFn === "function" ? ["", optionsOrFn] : [optionsOrFn, maybeFn!];
    const conn = await pool.reserve();
    let savepoints = 0;
    const run = async (body: (tx: never) => unknown): Promise<unknown> => {
      const x = body(tx as never);
      return await (Array.isArray(x) ? Promise.all(x) : x);
    };
    const tx = Object.assign(conn, {
      savepoint(nameOrFn: string | ((tx: never) => unknown), maybeBody?: (tx: never) => unknown): Promise<unknown> {
        const [label, body] = typeof nameOrFn === "function" ? ["", nameOrFn] : [nameOrFn, maybeBody!];
        const name = `s${savepoints++}${label ? `_${label.replace(/[^a-z0-9_]/gi, "")}` : ""}`;
        return (async () => {
          await conn.unsafe(`savepoint ${name}`);
          try {
            return await run(body);
          } catch (e) {
            await conn.unsafe(`rollback to ${name}`);
            throw e;
          }
        })();
      },
    });
    // Released only when the server is known to have ended the transaction (or never begun one):
    // after a COMMIT or ROLLBACK, or an error PostgreSQL itself answered with (a failed BEGIN, a
    // COMMIT refused, which ends the transaction). A connection lost under the transaction is
    // already in the pool's closed queue (postgres.js reconnects it on demand); releasing it would
    // list it as open.
    let ended = false;
    const answered = (e: unknown) => e instanceof postgres.PostgresError;
    // The callback may be waiting on something other than a statement when the connection closes
    // (statements on it fail with CONNECTION_CLOSED, scripts/patch-deps.mjs): `lost` rejects then,
    // as postgres.js's own begin races its callback with the connection's close.
    let connection: { onclose?: ((e: unknown) => void) | null } | null = null;
    let onLost: (e: unknown) => void = () => {};
    const lost = new Promise<never>((_, reject) => (onLost = reject));
    lost.catch(() => {});
    const guarded = <T>(p: Promise<T>) => Promise.race([p, lost]);
    try {
      try {
        await conn.unsafe(`begin ${options.replace(/[^a-z ]/gi, "") || DEFAULT_ISOLATION}${limits}`, [], {
          onexecute: (c: typeof connection) => {
            connection = c;
            c!.onclose = (e) => onLost(e ?? new Error("the connection closed during the transaction"));
          },
        } as never);
      } catch (e) {
        ended = answered(e);
        throw e;
      }
      const end = async (statement: "commit" | "rollback") => {
        try {
          await guarded(conn.unsafe(statement));
          ended = true;
        } catch (e) {
          ended = answered(e);
          throw e;
        }
      };
      let result: unknown;
      try {
        result = await guarded(run(fn));
      } catch (e) {
        // The callback's error is the one to report, whatever the ROLLBACK does.
        await end("rollback").catch(() => undefined);
        throw e;
      }
      await end("commit");
      return result;
    } finally {
      if (connection) (connection as { onclose?: unknown }).onclose = null;
      if (ended) conn.release();
    }
  }
  return begin as unknown as PgSql["begin"];
}
