// What `keyward db copy` copies (db/copy.ts): the plan, checked before any row moves. The source
// must be a current Keyward database whose tables and columns are exactly the SQLite schema's, each
// with a PostgreSQL counterpart; the tables come in foreign-key order, each column with the
// conversion its PostgreSQL type needs (ms integers → timestamptz, 0/1 → boolean, JSON text → jsonb).
import type { Database } from "bun:sqlite";
import { getTableColumns, is } from "drizzle-orm";
import { SQLiteTable, getTableConfig as sqliteTableConfig } from "drizzle-orm/sqlite-core";
import { PgTable, getTableConfig as pgTableConfig } from "drizzle-orm/pg-core";
import * as sqliteSchema from "./schema";
import * as pgSchema from "./schema-pg";
import { MIGRATIONS } from "./migrations.gen";
import { unknownMigrations } from "./migrate";

/** The copy would be wrong or unsafe; nothing was written to the target's tables. */
export class CopyRefusedError extends Error {
  override name = "CopyRefusedError";
}

/** The copy failed part-way: the target holds some rows and must be emptied before a retry. */
export class CopyFailedError extends Error {
  override name = "CopyFailedError";
}

const MIGRATIONS_TABLE = "_keyward_migrations";

export interface TablePlan {
  name: string;
  source: SQLiteTable;
  target: PgTable;
  /** [column name, property key, converter] in schema order. */
  columns: { name: string; key: string; pgType: string; convert: (v: unknown, where: () => string) => unknown }[];
}

/** Every table of a drizzle schema module, by name. */
function sqliteTables(): Map<string, SQLiteTable> {
  const out = new Map<string, SQLiteTable>();
  for (const value of Object.values(sqliteSchema) as unknown[]) if (is(value, SQLiteTable)) out.set(sqliteTableConfig(value).name, value);
  return out;
}
function pgTables(): Map<string, PgTable> {
  const out = new Map<string, PgTable>();
  for (const value of Object.values(pgSchema) as unknown[]) if (is(value, PgTable)) out.set(pgTableConfig(value).name, value);
  return out;
}

const describeValue = (v: unknown) => (typeof v === "string" ? `text of ${v.length} chars` : `${typeof v} ${String(v).slice(0, 40)}`);

/** SQLite stores what the PostgreSQL column type expects in a different form; convert one value. */
function converterFor(pgColumnType: string): TablePlan["columns"][number]["convert"] {
  switch (pgColumnType) {
    case "PgTimestamp":
      return (v, where) => {
        if (v === null) return null;
        if (typeof v === "number" && Number.isInteger(v)) return new Date(v);
        throw new CopyFailedError(`${where()}: expected integer milliseconds, found ${describeValue(v)}`);
      };
    case "PgBoolean":
      return (v, where) => {
        if (v === null) return null;
        if (v === 0 || v === 1) return v === 1;
        throw new CopyFailedError(`${where()}: expected 0 or 1, found ${describeValue(v)}`);
      };
    case "PgJsonb":
      return (v, where) => {
        if (v === null) return null;
        if (typeof v !== "string") throw new CopyFailedError(`${where()}: expected JSON text, found ${describeValue(v)}`);
        try {
          return JSON.parse(v);
        } catch {
          throw new CopyFailedError(`${where()}: not valid JSON`);
        }
      };
    case "PgInteger":
    case "PgBigInt53":
      return (v, where) => {
        if (v === null) return null;
        if (typeof v === "bigint") return Number(v);
        if (typeof v === "number" && Number.isInteger(v)) return v;
        throw new CopyFailedError(`${where()}: expected an integer, found ${describeValue(v)}`);
      };
    case "PgText":
      return (v, where) => {
        if (v === null || typeof v === "string") return v;
        throw new CopyFailedError(`${where()}: expected text, found ${describeValue(v)}`);
      };
    default:
      throw new CopyRefusedError(`no conversion to the PostgreSQL column type ${pgColumnType}`);
  }
}

/** Tables ordered so that every table comes after the tables its foreign keys reference. */
function foreignKeyOrder(tables: Map<string, SQLiteTable>): string[] {
  const deps = new Map<string, Set<string>>();
  for (const [name, table] of tables) {
    const refs = new Set(
      sqliteTableConfig(table)
        .foreignKeys.map((fk) => sqliteTableConfig(fk.reference().foreignTable).name)
        .filter((r) => r !== name),
    );
    deps.set(name, refs);
  }
  const order: string[] = [];
  const state = new Map<string, "visiting" | "done">();
  const visit = (name: string, path: string[]) => {
    if (state.get(name) === "done") return;
    if (state.get(name) === "visiting") throw new CopyRefusedError(`foreign keys form a cycle: ${[...path, name].join(" → ")}`);
    state.set(name, "visiting");
    for (const d of [...(deps.get(name) ?? [])].sort()) visit(d, [...path, name]);
    state.set(name, "done");
    order.push(name);
  };
  for (const name of [...tables.keys()].sort()) visit(name, []);
  return order;
}

/** Checks the source against the schemas and returns the copy plan (refuses on any mismatch). */
export function planCopy(sqlite: Database): TablePlan[] {
  const sources = sqliteTables();
  const targets = pgTables();

  const hasMigrations = sqlite.query("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(MIGRATIONS_TABLE);
  const applied = new Set(
    hasMigrations ? (sqlite.query(`SELECT tag FROM ${MIGRATIONS_TABLE}`).all() as { tag: string }[]).map((r) => r.tag) : [],
  );
  const missing = MIGRATIONS.map((m) => m.tag).filter((t) => !applied.has(t));
  if (missing.length) {
    throw new CopyRefusedError(`the SQLite database is not at the current schema (migrations not applied: ${missing.join(", ")}); run \`keyward migrate\` with this version first`);
  }
  const newer = unknownMigrations(applied, MIGRATIONS);
  if (newer.length) {
    throw new CopyRefusedError(`the SQLite database has migrations this version does not know (${newer.join(", ")}); use the Keyward version that wrote it`);
  }

  const present = (
    sqlite
      .query("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name <> ? ORDER BY name")
      .all(MIGRATIONS_TABLE) as { name: string }[]
  ).map((r) => r.name);
  const unknown = present.filter((n) => !sources.has(n));
  if (unknown.length) {
    throw new CopyRefusedError(`the SQLite database has tables the schema does not know: ${unknown.join(", ")}; they would not be copied`);
  }
  const absent = [...sources.keys()].filter((n) => !present.includes(n));
  if (absent.length) throw new CopyRefusedError(`the SQLite database lacks tables of the schema: ${absent.join(", ")}`);
  const noTarget = [...sources.keys()].filter((n) => !targets.has(n));
  if (noTarget.length) throw new CopyRefusedError(`tables without a PostgreSQL counterpart: ${noTarget.join(", ")}`);

  return foreignKeyOrder(sources).map((name) => {
    const source = sources.get(name)!;
    const target = targets.get(name)!;
    const onDisk = (sqlite.query(`PRAGMA table_info("${name}")`).all() as { name: string }[]).map((c) => c.name).sort();
    const declared = sqliteTableConfig(source).columns.map((c) => c.name);
    if (onDisk.join() !== [...declared].sort().join()) {
      throw new CopyRefusedError(`table ${name} has columns (${onDisk.join(", ")}) where the schema declares (${[...declared].sort().join(", ")})`);
    }
    const pgColumns = getTableColumns(target);
    const columns = Object.entries(getTableColumns(source)).map(([key, col]) => {
      const pgCol = pgColumns[key];
      if (!pgCol || pgCol.name !== col.name) throw new CopyRefusedError(`column ${name}.${col.name} has no PostgreSQL counterpart`);
      return { name: col.name, key, pgType: pgCol.columnType, convert: converterFor(pgCol.columnType) };
    });
    return { name, source, target, columns };
  });
}
