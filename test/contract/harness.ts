// Contract suites: one suite per repository, run against every engine. SQLite always runs (a fresh
// file per open()); PostgreSQL runs when TEST_DATABASE_URL is set (a fresh database per open(),
// dropped on close) and otherwise prints one line saying it was skipped.
import { describe } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDatabase, type DbHandle } from "../../src/db/client";
import { runMigrations } from "../../src/db/migrate";
import { openPostgres, type PgHandle } from "../../src/db/pg";
import { runPgMigrations } from "../../src/db/migrate.pg";
import type { Engine } from "../../src/db/store";
import { freshPgDatabase, pgTestUrl } from "../support/pg";

export interface Opened {
  engine: Engine;
  /** Set on SQLite. */
  sqlite: DbHandle | null;
  /** Set on PostgreSQL. */
  pg: PgHandle | null;
  close(): Promise<void>;
}

export async function openEngine(engine: Engine, label: string): Promise<Opened> {
  if (engine === "sqlite") {
    const dir = mkdtempSync(join(tmpdir(), "keyward-contract-"));
    const sqlite = openDatabase(join(dir, "keyward.db"));
    runMigrations(sqlite.sqlite, Date.now());
    return {
      engine,
      sqlite,
      pg: null,
      async close() {
        await sqlite.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  }
  const db = await freshPgDatabase(label, { migrated: true });
  const pg = openPostgres(db.url, { max: 8 });
  try {
    await runPgMigrations(pg.sql, Date.now());
  } catch (e) {
    await pg.close();
    await db.drop();
    throw e;
  }
  return {
    engine,
    sqlite: null,
    pg,
    async close() {
      await pg.close();
      await db.drop();
    },
  };
}

let announced = false;

/** The engines this run covers; announces once when PostgreSQL is skipped. */
export function engines(): Engine[] {
  if (pgTestUrl()) return ["sqlite", "postgres"];
  if (!announced) {
    announced = true;
    console.log("contract suites: PostgreSQL skipped (set TEST_DATABASE_URL to run it)");
  }
  return ["sqlite"];
}

/** `describe(name [engine])` for each engine; `open` gives a fresh, migrated database of that engine. */
export function forEachEngine(name: string, body: (engine: Engine, open: () => Promise<Opened>) => void): void {
  for (const engine of engines()) {
    describe(`${name} [${engine}]`, () => body(engine, () => openEngine(engine, name)));
  }
}
