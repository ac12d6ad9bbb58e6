// Applies the PostgreSQL migrations drizzle-kit generated into drizzle-pg/ (embedded by
// scripts/embed-migrations.ts), with the semantics of migrate.ts: one row per applied migration in
// _keyward_migrations, a sha256 of its SQL, a changed migration refused, each migration in one
// transaction.
//
// Several nodes may boot at once against one database. Each migration's transaction takes
// `LOCK TABLE _keyward_migrations IN ACCESS EXCLUSIVE MODE` and re-reads the applied tags under it,
// so exactly one node applies a migration and the others see it applied. Not advisory locks: behind
// a transaction-mode pooler (PgBouncer) a session advisory lock can be taken on one server
// connection and released on another; a table lock lives and dies with its transaction.
import type postgres from "postgres";
import { NewerSchemaError, unknownMigrations, type AppliedMigration } from "./migrate";
import { PG_MIGRATIONS } from "./migrations-pg.gen";

export type { AppliedMigration };

type Migration = { tag: string; sql: string };

// SQLSTATEs a concurrent CREATE TABLE IF NOT EXISTS can raise when two sessions create the table at
// the same instant (the check and the catalog insert are not atomic): unique_violation on pg_type,
// duplicate_table, or duplicate_object ("type … already exists", seen in the three-process test).
const CREATE_RACE = new Set(["23505", "42P07", "42710"]);

async function ensureTable(sql: postgres.Sql<any>): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      await sql`CREATE TABLE IF NOT EXISTS _keyward_migrations (
        tag text PRIMARY KEY,
        hash text NOT NULL,
        applied_at timestamp with time zone NOT NULL
      )`;
      return;
    } catch (err) {
      const code = (err as { code?: string }).code;
      if (attempt < 3 && code && CREATE_RACE.has(code)) continue;
      throw err;
    }
  }
}

function hashOf(m: Migration): string {
  return new Bun.CryptoHasher("sha256").update(m.sql).digest("hex");
}

function refuseChanged(tag: string): never {
  throw new Error(`Migration ${tag} was changed after it was applied (hash mismatch)`);
}

/** `migrations` is for tests (a changed migration); the app passes none and gets PG_MIGRATIONS. */
export async function runPgMigrations(
  sql: postgres.Sql<any>,
  nowMs: number,
  migrations: readonly Migration[] = PG_MIGRATIONS,
): Promise<AppliedMigration[]> {
  await ensureTable(sql);
  // Fast path without the lock: a node booting against an up-to-date database takes no exclusive
  // lock, so rolling restarts do not queue behind each other.
  const known = new Map((await sql<{ tag: string; hash: string }[]>`SELECT tag, hash FROM _keyward_migrations`).map((r) => [r.tag, r.hash]));
  const newer = unknownMigrations(known.keys(), migrations);
  if (newer.length) throw new NewerSchemaError(newer);
  const result: AppliedMigration[] = [];
  for (const m of migrations) {
    const hash = hashOf(m);
    const seen = known.get(m.tag);
    if (seen !== undefined) {
      if (seen !== hash) refuseChanged(m.tag);
      result.push({ tag: m.tag, appliedNow: false });
      continue;
    }
    const appliedNow = await sql.begin(async (tx) => {
      // A migration may take long, and other nodes starting at once wait for its lock: the pool's
      // request-transaction limits (db/pg.ts, TransactionTimeouts) do not apply here.
      await tx`SET LOCAL lock_timeout = 0`;
      await tx`SET LOCAL idle_in_transaction_session_timeout = 0`;
      await tx`LOCK TABLE _keyward_migrations IN ACCESS EXCLUSIVE MODE`;
      // Another node may have applied it while this one waited for the lock.
      const [row] = await tx<{ hash: string }[]>`SELECT hash FROM _keyward_migrations WHERE tag = ${m.tag}`;
      if (row) {
        if (row.hash !== hash) refuseChanged(m.tag);
        return false;
      }
      const statements = m.sql
        .split("--> statement-breakpoint")
        .map((s) => s.trim())
        .filter(Boolean);
      for (const stmt of statements) await tx.unsafe(stmt);
      await tx`INSERT INTO _keyward_migrations (tag, hash, applied_at)
        VALUES (${m.tag}, ${hash}, to_timestamp(${nowMs}::double precision / 1000))`;
      return true;
    });
    result.push({ tag: m.tag, appliedNow });
  }
  return result;
}
