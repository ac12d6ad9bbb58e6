// The engine-neutral database handle in Deps. Repositories hold their engine's own connection; the
// rest of the app only needs to know the engine, whether the database answers, and how to close it.
// container.ts is the one place that picks the engine (DATABASE_URL: PostgreSQL; unset: SQLite file).
import type { Repos } from "../deps";
import type { RateLimiter } from "../shared/rate-limiter";
import type { Clock } from "../shared/clock";
import type { ClockSkew } from "./clock-skew";

export type Engine = "sqlite" | "postgres";

export interface DataStore {
  readonly engine: Engine;
  /** Rejects when the database cannot answer (health checks). */
  ping(): Promise<void>;
  /** Idempotent; SQLite checkpoints its WAL first, PostgreSQL drains its pool. */
  close(): Promise<void>;
  /**
   * Runs `fn` with repositories bound to one transaction: everything they write commits when `fn`
   * resolves and rolls back when it throws. For verbs that must compose several repository calls
   * atomically (a single rule that must hold stays one repository method, with its own locks).
   * Inside `fn` use only the repositories it receives: Deps' repositories wait for the transaction
   * on SQLite (one writer per file; no request reads uncommitted rows) and use another connection
   * on PostgreSQL. A repository method's own transaction becomes a savepoint. On PostgreSQL the
   * transaction is READ COMMITTED; the two methods that need SERIALIZABLE (signing-key activation,
   * settings update) refuse to run inside it rather than run with weaker guarantees.
   */
  transaction<T>(fn: (repos: Repos) => Promise<T>, opts?: TransactionOptions): Promise<T>;
}

export interface TransactionOptions {
  /**
   * The commit reaches stable storage before the transaction resolves, whatever the engine's
   * setting: for changes whose sender will not ask again once answered (a Stripe event acknowledged
   * with 200 is never redelivered). SQLite runs with synchronous=NORMAL, where a commit survives a
   * crash of the process but not a power loss or an OS crash; this commit runs with
   * synchronous=FULL. PostgreSQL: synchronous_commit=on for this transaction, should the server or
   * role turn it off.
   */
  durable?: boolean;
}

/** What an engine gives container.ts: its store, its repositories, its public rate limiter. */
export interface EngineParts {
  store: DataStore;
  repos: Repos;
  rateLimiter: RateLimiter;
  closeDb(): Promise<void>;
  /** PostgreSQL: measures a clock against the database server's (db/clock-skew.ts). */
  clockSkew?(clock: Clock): Promise<ClockSkew>;
}
