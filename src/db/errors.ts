// Translates constraint failures of either engine into domain errors; repo.sqlite.ts and repo.pg.ts
// files use these helpers. drizzle wraps driver errors (DrizzleQueryError), so the cause chain is
// searched: SQLite reports SQLITE_CONSTRAINT_* codes, PostgreSQL SQLSTATE 23505 / 23503. Also: which
// failures mean "the database cannot answer right now" (the error handler's 503).
import { AppError } from "../shared/errors";

interface DriverError {
  code?: string;
  message?: string;
  cause?: unknown;
}

function causes(e: unknown): DriverError[] {
  const out: DriverError[] = [];
  let cur = e as DriverError | null | undefined;
  for (let i = 0; cur && typeof cur === "object" && i < 5; i++) {
    out.push(cur);
    cur = cur.cause as DriverError | undefined;
  }
  return out;
}

/**
 * What went wrong with a statement, for a person to read: the driver's reason (and its SQLSTATE or
 * SQLite code). A DrizzleQueryError's own message is the SQL followed by every parameter value of
 * the statement (a batch of rows, with emails and ciphertexts), so it is never used.
 */
export function statementFailure(e: unknown): string {
  const chain = causes(e);
  const reason = chain.find((err) => !("params" in err) && typeof err.message === "string") ?? chain[chain.length - 1];
  const message = reason?.message ?? String(e);
  return reason?.code ? `${message} (${reason.code})` : message;
}

export function isUniqueViolation(e: unknown): boolean {
  return causes(e).some(
    (err) =>
      err.code === "SQLITE_CONSTRAINT_UNIQUE" ||
      err.code === "SQLITE_CONSTRAINT_PRIMARYKEY" ||
      err.code === "23505" ||
      /UNIQUE constraint failed/.test(err.message ?? ""),
  );
}

export function isForeignKeyViolation(e: unknown): boolean {
  return causes(e).some(
    (err) => err.code === "SQLITE_CONSTRAINT_FOREIGNKEY" || err.code === "23503" || /FOREIGN KEY constraint failed/.test(err.message ?? ""),
  );
}

export function rethrowConstraint(e: unknown, messages: { unique?: string; foreignKey?: string }): never {
  if (messages.unique && isUniqueViolation(e)) throw new AppError("CONFLICT", { message: messages.unique });
  if (messages.foreignKey && isForeignKeyViolation(e)) throw new AppError("CONFLICT", { message: messages.foreignKey });
  throw e;
}

/**
 * postgres.js's own connection failures, and the socket errors it passes on as they are: the
 * connection was lost, refused or never established, or the server went silent on it
 * (CONNECTION_STALLED: the watchdog of scripts/patch-deps.mjs, DATABASE_STALL_TIMEOUT_MS).
 */
const LOST_CONNECTION = new Set([
  "CONNECTION_CLOSED",
  "CONNECTION_STALLED",
  "CONNECTION_DESTROYED",
  "CONNECTION_ENDED",
  "CONNECT_TIMEOUT",
  "ECONNRESET",
  "ECONNREFUSED",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EAI_AGAIN",
]);

/**
 * PostgreSQL SQLSTATEs of a server that cannot serve now: the connection exception class (08…),
 * the server shutting down or starting (57P01 admin_shutdown, 57P02 crash_shutdown, 57P03
 * cannot_connect_now), too many connections (53300), and a transaction aborted by a serialization
 * failure or deadlock that outlasted its retries (40001, 40P01), a row lock still held by another
 * session after the transaction's lock_timeout (55P03), a transaction ended by the server after
 * idling past idle_in_transaction_session_timeout (25P03), a statement cancelled (57014: an
 * operator's pg_cancel_backend, a server-side statement_timeout), and a write refused because the
 * server is a read-only standby (25006: after a failover, until the connection reaches the new
 * primary; target_session_attrs=read-write in DATABASE_URL makes new connections skip standbys).
 * SQLite: the write lock still held by another process after busy_timeout (SQLITE_BUSY and its
 * extended codes).
 */
function isUnavailableCode(code: string): boolean {
  return (
    LOST_CONNECTION.has(code) ||
    code.startsWith("08") ||
    code === "57P01" ||
    code === "57P02" ||
    code === "57P03" ||
    code === "53300" ||
    code === "40001" ||
    code === "40P01" ||
    code === "55P03" ||
    code === "25P03" ||
    code === "57014" ||
    code === "25006" ||
    isSqliteBusyCode(code)
  );
}

/** SQLite's "the write lock is held by another connection" (SQLITE_BUSY and its extended codes). */
export function isSqliteBusyCode(code: string): boolean {
  return code === "SQLITE_BUSY" || code.startsWith("SQLITE_BUSY_");
}

/**
 * The database cannot answer right now, and asking again shortly may succeed: a lost or refused
 * connection, a server restarting, a lock held past its timeout. Whatever the statement was, its
 * transaction did not commit, except when the connection was lost during COMMIT itself, when the
 * caller cannot know (an Idempotency-Key makes the retry safe).
 */
export function isDatabaseUnavailable(e: unknown): boolean {
  return causes(e).some((err) => typeof err.code === "string" && isUnavailableCode(err.code));
}

/**
 * An error from the database or the way to it, rather than from Keyward's own code: a driver's
 * connection failure, a PostgreSQL error (it carries a severity), or an SQLite one (SQLITE_* codes).
 */
export function isDatabaseFailure(e: unknown): boolean {
  return (
    isDatabaseUnavailable(e) ||
    causes(e).some((err) => typeof (err as { severity?: unknown }).severity === "string" || (typeof err.code === "string" && err.code.startsWith("SQLITE_")))
  );
}

/**
 * What an operator should change when a failure comes from how the database is reached rather than
 * from Keyward, or null. A prepared statement the server does not know (SQLSTATE 26000) means the
 * connection goes through a transaction-mode pooler that does not keep prepared statements from
 * one transaction to the next (PgBouncer before 1.21, or max_prepared_statements = 0).
 */
export function databaseSetupHint(e: unknown): string | null {
  if (causes(e).some((err) => err.code === "26000" && /prepared statement/i.test(err.message ?? ""))) {
    return "PostgreSQL does not know a prepared statement: DATABASE_URL goes through a transaction-mode pooler that does not keep them; add prepare=false to DATABASE_URL (docs/operations.md)";
  }
  return null;
}
