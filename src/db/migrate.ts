// Applies the migrations drizzle-kit generated (embedded at build time by scripts/embed-migrations.ts,
// so the compiled executable needs no files beside it). Each migration runs in one transaction.
import type { Database } from "bun:sqlite";
import { MIGRATIONS } from "./migrations.gen";

export interface AppliedMigration {
  tag: string;
  appliedNow: boolean;
}

/**
 * The database holds migrations this version does not know: a newer Keyward migrated it (after a
 * rollback to an older release, or an old node restarting during a rolling upgrade). Its code
 * would run against a schema it was not written for (a column it does not fill, one renamed under
 * it), so it refuses to start instead.
 */
export class NewerSchemaError extends Error {
  override name = "NewerSchemaError";
  constructor(readonly tags: string[]) {
    super(
      `the database was migrated by a newer Keyward (migrations this version does not know: ${tags.join(", ")}); run that version or a later one, or restore the backup taken before the upgrade`,
    );
  }
}

/** Applied tags that `known` does not list, sorted, for NewerSchemaError. */
export function unknownMigrations(applied: Iterable<string>, known: readonly { tag: string }[]): string[] {
  const tags = new Set(known.map((m) => m.tag));
  return [...applied].filter((t) => !tags.has(t)).sort();
}

export function runMigrations(sqlite: Database, now: number): AppliedMigration[] {
  sqlite.exec(`CREATE TABLE IF NOT EXISTS _keyward_migrations (
    tag TEXT PRIMARY KEY,
    hash TEXT NOT NULL,
    applied_at INTEGER NOT NULL
  )`);
  const applied = new Map(
    (sqlite.query("SELECT tag, hash FROM _keyward_migrations").all() as { tag: string; hash: string }[]).map(
      (r) => [r.tag, r.hash],
    ),
  );
  const newer = unknownMigrations(applied.keys(), MIGRATIONS);
  if (newer.length) throw new NewerSchemaError(newer);
  const result: AppliedMigration[] = [];
  for (const m of MIGRATIONS) {
    const hash = new Bun.CryptoHasher("sha256").update(m.sql).digest("hex");
    const known = applied.get(m.tag);
    if (known !== undefined) {
      if (known !== hash) {
        throw new Error(`Migration ${m.tag} was changed after it was applied (hash mismatch)`);
      }
      result.push({ tag: m.tag, appliedNow: false });
      continue;
    }
    const statements = m.sql
      .split("--> statement-breakpoint")
      .map((s) => s.trim())
      .filter(Boolean);
    sqlite.transaction(() => {
      for (const stmt of statements) sqlite.exec(stmt);
      sqlite.query("INSERT INTO _keyward_migrations (tag, hash, applied_at) VALUES (?, ?, ?)").run(m.tag, hash, now);
    }).immediate();
    result.push({ tag: m.tag, appliedNow: true });
  }
  return result;
}
