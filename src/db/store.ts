// The engine-neutral database handle in Deps. Repositories hold their engine's own connection; the
// rest of the app only needs to know the engine, whether the database answers, and how to close it.
// container.ts is the one place that picks the engine (DATABASE_URL: PostgreSQL; unset: SQLite file).
export type Engine = "sqlite" | "postgres";

export interface DataStore {
  readonly engine: Engine;
  /** Rejects when the database cannot answer (health checks). */
  ping(): Promise<void>;
  /** Idempotent; SQLite checkpoints its WAL first, PostgreSQL drains its pool. */
  close(): Promise<void>;
}
