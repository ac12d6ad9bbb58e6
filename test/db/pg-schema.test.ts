// The PostgreSQL schema (src/db/schema-pg) mirrors the SQLite one (src/db/schema): same tables, same
// column names and TypeScript property names, same nullability, defaults, keys, indexes and foreign
// keys, so repositories of either engine read rows of one shape and `keyward db copy` can move every
// row across. The only intended differences are storage types (checked in TYPE_MAP below).
import { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import { runMigrations } from "../../src/db/migrate";
import { is, getTableColumns, type InferSelectModel } from "drizzle-orm";
import { SQLiteTable, getTableConfig as sqliteConfig } from "drizzle-orm/sqlite-core";
import { PgTable, getTableConfig as pgConfig } from "drizzle-orm/pg-core";
import * as lite from "../../src/db/schema";
import * as pg from "../../src/db/schema-pg";

const liteTables = (Object.values(lite) as unknown[]).filter((v): v is SQLiteTable => is(v, SQLiteTable));
const pgTables = (Object.values(pg) as unknown[]).filter((v): v is PgTable => is(v, PgTable));
const byName = <T>(tables: T[], name: (t: T) => string) => new Map(tables.map((t) => [name(t), t]));
const liteByName = byName(liteTables, (t) => sqliteConfig(t).name);
const pgByName = byName(pgTables, (t) => pgConfig(t).name);

/** SQLite column type (drizzle columnType) → the PostgreSQL ones allowed for it. */
const TYPE_MAP: Record<string, string[]> = {
  SQLiteText: ["PgText"],
  SQLiteTextJson: ["PgJsonb"],
  SQLiteTimestamp: ["PgTimestamp"],
  SQLiteBoolean: ["PgBoolean"],
  SQLiteInteger: ["PgInteger", "PgBigInt53"],
};

/** Columns that may exceed 2^31 and so must be bigint in PostgreSQL. */
const BIGINT = [
  "products.release_generation",
  "plan_features.quota_limit",
  "addons.quota_limit",
  "artifacts.declared_size",
  "artifacts.file_size",
  "usage_counters.used",
  "usage_events.quantity",
  "payments.amount",
  "meter_queue.quantity",
  "rate_limit_counters.window_start",
  "job_leases.fence",
  "generations.value",
].sort();


/**
 * An index column's name. A PostgreSQL column in COLLATE "C" (the walks' keyset order, SQLite's byte
 * order: schema-pg/licenses.ts) stands for SQLite's plain column; any other expression has no name.
 */
function indexColumn(c: unknown): string | undefined {
  const named = (c as { name?: string }).name;
  if (named) return named;
  const chunks = (c as { queryChunks?: unknown[] }).queryChunks ?? [];
  const cols = chunks.filter((k): k is { name: string } => typeof k === "object" && k !== null && "columnType" in k);
  const text = chunks.map((k) => (typeof k === "object" && k !== null && "value" in k ? (k as { value: string[] }).value.join("") : "")).join("");
  return cols.length === 1 && text.trim() === 'COLLATE "C"' ? cols[0]!.name : undefined;
}

function describeTable(config: {
  columns: { name: string; notNull: boolean; primary: boolean; hasDefault: boolean; default: unknown; enumValues?: string[] }[];
  indexes: { config: { name?: string; unique: boolean; columns: unknown[] } }[];
  foreignKeys: { reference(): { columns: { name: string }[]; foreignColumns: { name: string; table: unknown }[] }; onDelete?: string | undefined }[];
  primaryKeys: { columns: { name: string }[] }[];
}, tableName: (t: unknown) => string) {
  const columns = Object.fromEntries(
    config.columns.map((c) => [
      c.name,
      {
        notNull: c.notNull,
        primary: c.primary,
        default: c.hasDefault ? c.default : "(none)",
        enum: c.enumValues ?? null,
      },
    ]),
  );
  const indexes = config.indexes
    .map((i) => ({
      name: i.config.name,
      unique: i.config.unique,
      columns: i.config.columns.map(indexColumn),
    }))
    .sort((a, b) => String(a.name).localeCompare(String(b.name)));
  const foreignKeys = config.foreignKeys
    .map((fk) => {
      const r = fk.reference();
      return {
        columns: r.columns.map((c) => c.name),
        table: tableName(r.foreignColumns[0]!.table),
        foreignColumns: r.foreignColumns.map((c) => c.name),
        onDelete: fk.onDelete ?? "no action",
      };
    })
    .sort((a, b) => a.columns.join().localeCompare(b.columns.join()));
  const primaryKeys = config.primaryKeys.map((pk) => pk.columns.map((c) => c.name));
  return { columns, indexes, foreignKeys, primaryKeys };
}

describe("the PostgreSQL schema mirrors the SQLite schema", () => {
  test("same tables, including the coordination tables", () => {
    expect([...pgByName.keys()].sort()).toEqual([...liteByName.keys()].sort());
    expect(liteByName.has("job_leases")).toBe(true);
    expect(liteByName.has("generations")).toBe(true);
    // …and the schema exports every table the SQLite migrations create.
    const sqlite = new Database(":memory:");
    runMigrations(sqlite, 0);
    const created = (sqlite.query("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name <> '_keyward_migrations'").all() as { name: string }[]).map((r) => r.name);
    sqlite.close();
    expect([...liteByName.keys()].sort()).toEqual(created.sort());
  });

  test("same exported names (tables and enum lists)", () => {
    expect(Object.keys(pg).sort()).toEqual(Object.keys(lite).sort());
    expect(pg.LICENSE_STATUSES).toEqual(lite.LICENSE_STATUSES);
    expect(pg.PLATFORMS).toEqual(lite.PLATFORMS);
  });

  for (const [name, liteTable] of liteByName) {
    test(`${name}: same columns, property names, nullability, defaults, enums, keys, indexes, foreign keys`, () => {
      const pgTable = pgByName.get(name);
      expect(pgTable).toBeDefined();
      const l = sqliteConfig(liteTable);
      const p = pgConfig(pgTable!);
      const lp = describeTable(l as never, (t) => sqliteConfig(t as SQLiteTable).name);
      const pp = describeTable(p as never, (t) => pgConfig(t as PgTable).name);
      expect(pp.columns).toEqual(lp.columns);
      expect(pp.indexes).toEqual(lp.indexes);
      expect(pp.foreignKeys).toEqual(lp.foreignKeys);
      expect(pp.primaryKeys).toEqual(lp.primaryKeys);
      // Column-level unique() (e.g. products.slug) is a constraint in pg-core and an index in sqlite-core.
      const uniqueCols = (cols: { name: string; isUnique: boolean; uniqueName?: string | undefined }[]) =>
        cols.filter((c) => c.isUnique).map((c) => [c.name, c.uniqueName]);
      expect(uniqueCols(p.columns as never)).toEqual(uniqueCols(l.columns as never));

      const propsOf = (cols: Record<string, { name: string }>) =>
        Object.fromEntries(Object.entries(cols).map(([prop, c]) => [prop, c.name]));
      expect(propsOf(getTableColumns(pgTable!))).toEqual(propsOf(getTableColumns(liteTable)));

      for (const lc of l.columns) {
        const pc = p.columns.find((c) => c.name === lc.name)!;
        expect({ column: lc.name, type: TYPE_MAP[lc.columnType]?.includes(pc.columnType) ? "mapped" : `${lc.columnType}→${pc.columnType}` }).toEqual({
          column: lc.name,
          type: "mapped",
        });
      }
    });
  }

  test("counters and sizes that can pass 2^31 are bigint, returned as numbers", () => {
    const bigints = pgTables.flatMap((t) => {
      const c = pgConfig(t);
      return c.columns.filter((col) => col.columnType === "PgBigInt53").map((col) => `${c.name}.${col.name}`);
    });
    expect(bigints.sort()).toEqual(BIGINT);
  });

  test("a row has the same TypeScript shape on both engines", () => {
    // Compile-time: `npx tsc` fails if any select model differs between the engines.
    type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
    const checks: [
      Same<InferSelectModel<typeof lite.licenses>, InferSelectModel<typeof pg.licenses>>,
      Same<InferSelectModel<typeof lite.plans>, InferSelectModel<typeof pg.plans>>,
      Same<InferSelectModel<typeof lite.artifacts>, InferSelectModel<typeof pg.artifacts>>,
      Same<InferSelectModel<typeof lite.apiKeys>, InferSelectModel<typeof pg.apiKeys>>,
      Same<InferSelectModel<typeof lite.settings>, InferSelectModel<typeof pg.settings>>,
      Same<InferSelectModel<typeof lite.usageEvents>, InferSelectModel<typeof pg.usageEvents>>,
      Same<InferSelectModel<typeof lite.signingKeys>, InferSelectModel<typeof pg.signingKeys>>,
      Same<InferSelectModel<typeof lite.outbox>, InferSelectModel<typeof pg.outbox>>,
      Same<InferSelectModel<typeof lite.jobLeases>, InferSelectModel<typeof pg.jobLeases>>,
      Same<InferSelectModel<typeof lite.generations>, InferSelectModel<typeof pg.generations>>,
    ] = [true, true, true, true, true, true, true, true, true, true];
    expect(checks.every(Boolean)).toBe(true);
  });
});
