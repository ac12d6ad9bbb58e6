// The engine-neutral database handle in Deps. Repositories hold their engine's own connection; the
// rest of the app only needs to know the engine, whether the database answers, and how to close it.
// container.ts is the one place that picks the engine (DATABASE_URL: PostgreSQL; unset: SQLite file).
import type { Config } from "../config";
import type { Repos } from "../deps";
import type { Secrets } from "../modules/keys/secrets";
import type { RateLimiter } from "../shared/rate-limiter";
import type { Clock } from "../shared/clock";
import type { Logger } from "../shared/logger";
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
   * `fn` gets a Tx, not Deps: the transaction's repositories and the parts of Deps that touch
   * neither the database nor the network. Deps' repositories (which wait for the transaction on
   * SQLite, one writer per file, and use another connection on PostgreSQL) and a nested
   * `transaction` refuse with TransactionScopeError when called from inside `fn`, even through a
   * closure over `deps` (db/transaction-scope.ts). A repository method's own transaction becomes
   * a savepoint. On PostgreSQL the transaction is READ COMMITTED: a rule over rows locks them
   * (row locks), or a name when the rows may not exist yet (db/dialect/query.ts lockKey).
   */
  transaction<T>(fn: (tx: Tx) => Promise<T>, opts?: TransactionOptions): Promise<T>;
}

declare const TX: unique symbol;

/**
 * What a transaction's callback may use, and what functions that run inside a transaction take
 * (sessions' signIn, the Stripe event handlers). No `db` (no nested transaction), no Deps
 * repositories, nothing that does network I/O (Stripe, storage, the outbox nudge: after the
 * commit). Only DataStore.transaction makes one (the brand), so passing `deps` where a Tx is
 * required does not compile.
 */
export interface Tx {
  readonly [TX]: true;
  /** Bound to the transaction: everything they write commits or rolls back with it. */
  readonly repos: Repos;
  readonly clock: Clock;
  readonly config: Readonly<Config>;
  readonly secrets: Secrets;
  readonly logger: Logger;
}

/** A Tx's parts: what db/transaction-scope.ts brands. */
export type TxParts = Omit<Tx, typeof TX>;

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

/** An engine's own store: its transaction hands `fn` the bare repositories bound to it. */
export interface EngineStore extends Omit<DataStore, "transaction"> {
  transaction<T>(fn: (repos: Repos) => Promise<T>, opts?: TransactionOptions): Promise<T>;
}

/** What an engine gives container.ts: its store, its repositories, its public rate limiter. */
export interface EngineParts {
  store: EngineStore;
  repos: Repos;
  rateLimiter: RateLimiter;
  closeDb(): Promise<void>;
  /** PostgreSQL: measures a clock against the database server's (db/clock-skew.ts). */
  clockSkew?(clock: Clock): Promise<ClockSkew>;
}
