// `keyward db copy --to postgres://…`: moves a single-node deployment's SQLite database into an empty
// PostgreSQL database (docs/operations.md, "Moving from SQLite to PostgreSQL").
//
// What it guarantees, in order:
//  1. The source is a current Keyward database: every embedded SQLite migration applied, every table
//     in it known to the schema (src/db/schema) with the columns the schema declares, and every such
//     table present in the PostgreSQL schema. The table list comes from the schemas, so a table added
//     later cannot be forgotten: the copy refuses until it has a PostgreSQL counterpart.
//  2. The target gets the PostgreSQL migrations and must then hold no row in any Keyward table.
//  3. Rows are read from one SQLite read transaction (one consistent snapshot), in foreign-key order,
//     1,000 at a time by rowid (a large table is never loaded whole), converted per column
//     (ms integers → timestamptz, 0/1 → boolean, JSON text → jsonb) and inserted one batch per
//     PostgreSQL transaction. Text columns, sealed secrets included, are copied byte for byte, so
//     the same master key opens them.
//  4. Row counts per table are compared between the snapshot and the target.
import { Database } from "bun:sqlite";
import { existsSync } from "node:fs";
import { count } from "drizzle-orm";
import { CopyFailedError, CopyRefusedError, planCopy, type TablePlan } from "./copy-plan";
import { assertSupportedServer, openPostgres, UnsupportedServerError, type PgHandle, type PgSql } from "./pg";
import { runPgMigrations } from "./migrate.pg";
import { EARLIEST_INSTANT_MS, LATEST_INSTANT_MS, systemClock } from "../shared/clock";
import type { Logger } from "../shared/logger";
import { describePgUrl, parsePgUrl } from "./pg-url";
import { statementFailure } from "./errors";
import { MAX_STORED_IDENTIFIER_BYTES } from "../shared/identifier-limit";

export { CopyFailedError, CopyRefusedError } from "./copy-plan";

export interface CopyReport {
  tables: { name: string; rows: number }[];
}

export interface CopyOptions {
  sqlitePath: string;
  targetUrl: string;
  logger?: Logger;
  /** Rows per PostgreSQL transaction (default 1,000; lowered for wide tables to stay under 65,535 parameters). */
  batchSize?: number;
  nowMs?: () => number;
}

const MAX_PARAMETERS = 65_000;

/** At most this many offending values of each kind are named in the refusal. */
const MAX_NAMED = 10;

/** Whether a parsed JSON value holds U+0000 in a string or a key. */
function jsonHoldsNul(v: unknown): boolean {
  if (typeof v === "string") return v.includes("\u0000");
  if (Array.isArray(v)) return v.some(jsonHoldsNul);
  if (v !== null && typeof v === "object") return Object.entries(v).some(([k, m]) => k.includes("\u0000") || jsonHoldsNul(m));
  return false;
}

/** Places (table.column and rowid, never the values) PostgreSQL cannot store, by reason. */
interface Unstorable {
  /** U+0000 in text (22021) or in JSON (22P05). */
  nul: string[];
  /** Timestamps outside 0001-01-01 … 9999-12-31 UTC (shared/clock.ts), which PostgreSQL refuses as written. */
  instants: string[];
  /** Identifiers longer than a new row may hold (shared/identifier-limit.ts): PostgreSQL's index on them may not. */
  identifiers: string[];
}

/** Tables whose identifier PostgreSQL indexes with the license id. */
const IDENTIFIER_TABLES = new Set(["activations", "floating_sessions", "offline_activations"]);

/**
 * Values PostgreSQL cannot store. SQLite keeps them, and Keyward versions before the API refused
 * U+0000 (http/json-limits.ts, http/url-nul.ts) or instants outside the stored range
 * (http/common-schemas.ts toInstant) could store some. Found before anything is written, so the copy
 * refuses instead of failing part-way.
 */
function valuesPostgresCannotStore(sqlite: Database, plans: TablePlan[]): Unstorable {
  const found: Unstorable = { nul: [], instants: [], identifiers: [] };
  for (const plan of plans) {
    for (const col of plan.columns) {
      const place = (r: number) => `${plan.name}.${col.name} (rowid ${r})`;
      if (col.pgType === "PgText" && col.name === "identifier" && IDENTIFIER_TABLES.has(plan.name) && found.identifiers.length < MAX_NAMED) {
        const rows = sqlite
          .query(`SELECT rowid AS r FROM "${plan.name}" WHERE length(CAST("${col.name}" AS BLOB)) > ? ORDER BY rowid LIMIT ?`)
          .all(MAX_STORED_IDENTIFIER_BYTES, MAX_NAMED - found.identifiers.length) as { r: number }[];
        for (const { r } of rows) found.identifiers.push(place(r));
      }
      if (col.pgType === "PgText" && found.nul.length < MAX_NAMED) {
        const rows = sqlite
          .query(`SELECT rowid AS r FROM "${plan.name}" WHERE instr(CAST("${col.name}" AS BLOB), x'00') > 0 ORDER BY rowid LIMIT ?`)
          .all(MAX_NAMED - found.nul.length) as { r: number }[];
        for (const { r } of rows) found.nul.push(place(r));
      } else if (col.pgType === "PgJsonb" && found.nul.length < MAX_NAMED) {
        // JSON text carries U+0000 as the escape \u0000 (SQL string literals take no escapes): the
        // candidates are parsed, since "\\u0000" (an escaped backslash) is not U+0000.
        const rows = sqlite.query(`SELECT rowid AS r, "${col.name}" AS v FROM "${plan.name}" WHERE instr("${col.name}", '\\u0000') > 0 ORDER BY rowid`).all() as {
          r: number;
          v: string;
        }[];
        for (const { r, v } of rows) {
          let holds = false;
          try {
            holds = jsonHoldsNul(JSON.parse(v));
          } catch {
            // Not JSON: the copy's own conversion names it.
          }
          if (holds && found.nul.length < MAX_NAMED) found.nul.push(place(r));
        }
      } else if (col.pgType === "PgTimestamp" && found.instants.length < MAX_NAMED) {
        // Integer milliseconds only: anything else is named by the copy's own conversion.
        const rows = sqlite
          .query(`SELECT rowid AS r FROM "${plan.name}" WHERE typeof("${col.name}") = 'integer' AND ("${col.name}" < ? OR "${col.name}" > ?) ORDER BY rowid LIMIT ?`)
          .all(EARLIEST_INSTANT_MS, LATEST_INSTANT_MS, MAX_NAMED - found.instants.length) as { r: number }[];
        for (const { r } of rows) found.instants.push(place(r));
      }
    }
  }
  return found;
}

/** The refusal for values PostgreSQL cannot store, or null when there are none. */
function unstorableRefusal({ nul, instants, identifiers }: Unstorable): string | null {
  const list = (places: string[]) => `${places.join(", ")}${places.length === MAX_NAMED ? " (and maybe more)" : ""}`;
  const reasons = [
    ...(nul.length ? [`PostgreSQL cannot store U+0000 in text or JSON, and these values hold it: ${list(nul)}`] : []),
    ...(instants.length ? [`these timestamps lie outside 0001-01-01 to 9999-12-31 (UTC), which PostgreSQL cannot store as written: ${list(instants)}`] : []),
    ...(identifiers.length
      ? [`these identifiers are longer than ${MAX_STORED_IDENTIFIER_BYTES} bytes, more than PostgreSQL's index on them may hold: ${list(identifiers)}`]
      : []),
  ];
  return reasons.length ? `${reasons.join("; ")}; change or clear them in the SQLite database (docs/operations.md), then copy again` : null;
}

/** The target's DateStyle and encoding (pg.ts assertSupportedServer), as a refusal: nothing is written yet. */
async function refuseUnsupportedServer(sql: PgSql): Promise<void> {
  try {
    await assertSupportedServer(sql);
  } catch (e) {
    throw e instanceof UnsupportedServerError ? new CopyRefusedError(e.message) : e;
  }
}

async function nonEmptyTables(pg: PgHandle, plans: TablePlan[]): Promise<string[]> {
  const out: string[] = [];
  for (const p of plans) {
    const rows = await pg.sql.unsafe(`SELECT 1 FROM "${p.name}" LIMIT 1`);
    if (rows.length) out.push(p.name);
  }
  return out;
}

async function copyTable(sqlite: Database, pg: PgHandle, plan: TablePlan, batchSize: number): Promise<number> {
  const perBatch = Math.max(1, Math.min(batchSize, Math.floor(MAX_PARAMETERS / plan.columns.length)));
  const select = sqlite.query(
    `SELECT rowid AS "__rowid", ${plan.columns.map((c) => `"${c.name}"`).join(", ")} FROM "${plan.name}" WHERE rowid > ? ORDER BY rowid LIMIT ?`,
  );
  // Keyset pagination on rowid: each batch starts after the last rowid of the previous one.
  let after: number | bigint = -(2n ** 63n);
  let copied = 0;
  for (;;) {
    const rows = select.all(after, perBatch) as Record<string, unknown>[];
    if (rows.length === 0) break;
    const values = rows.map((row) => {
      const out: Record<string, unknown> = {};
      for (const c of plan.columns) out[c.key] = c.convert(row[c.name], () => `${plan.name}.${c.name} (rowid ${row.__rowid})`);
      return out;
    });
    await pg.db.transaction(async (tx) => {
      await tx.insert(plan.target).values(values as never);
    });
    copied += rows.length;
    after = rows[rows.length - 1]!.__rowid as number | bigint;
    if (rows.length < perBatch) break;
  }
  return copied;
}

export async function copySqliteToPostgres(opts: CopyOptions): Promise<CopyReport> {
  const { sqlitePath, targetUrl, logger } = opts;
  if (!existsSync(sqlitePath)) throw new CopyRefusedError(`no SQLite database at ${sqlitePath}`);
  const sqlite = new Database(sqlitePath, { readonly: true, strict: true });
  let pg: PgHandle | null = null;
  try {
    // One read transaction for every read below: all tables come from the same snapshot even if
    // something still writes to the file (it should not: see docs/operations.md).
    sqlite.exec("BEGIN");
    const plans = planCopy(sqlite);
    const refusal = unstorableRefusal(valuesPostgresCannotStore(sqlite, plans));
    if (refusal) throw new CopyRefusedError(refusal);

    pg = openPostgres(targetUrl, { max: 2 });
    await refuseUnsupportedServer(pg.sql);
    await runPgMigrations(pg.sql, (opts.nowMs ?? systemClock.nowMs)());
    const busy = await nonEmptyTables(pg, plans);
    if (busy.length) {
      throw new CopyRefusedError(`the target database is not empty (rows in ${busy.join(", ")}); copy only into a database no Keyward node has used`);
    }

    const tables: CopyReport["tables"] = [];
    for (const plan of plans) {
      let rows: number;
      try {
        rows = await copyTable(sqlite, pg, plan, opts.batchSize ?? 1000);
      } catch (e) {
        const reason = statementFailure(e);
        throw new CopyFailedError(`copying ${plan.name} failed: ${reason}. The target now holds a partial copy: drop and recreate it before trying again`);
      }
      tables.push({ name: plan.name, rows });
      logger?.info("db copy: table copied", { table: plan.name, rows });
    }

    for (const { name, rows } of tables) {
      const plan = plans.find((p) => p.name === name)!;
      const { n: inSource } = sqlite.query(`SELECT count(*) AS n FROM "${name}"`).get() as { n: number };
      const [{ n: inTarget } = { n: -1 }] = await pg.db.select({ n: count() }).from(plan.target);
      if (inSource !== rows || inTarget !== rows) {
        throw new CopyFailedError(`row counts differ for ${name}: ${inSource} in SQLite, ${rows} copied, ${inTarget} in PostgreSQL`);
      }
    }
    return { tables };
  } finally {
    if (sqlite.inTransaction) sqlite.exec("ROLLBACK");
    sqlite.close();
    await pg?.close();
  }
}

export const DB_USAGE = "usage: keyward db copy --to postgres://USER[:PASSWORD]@HOST[:PORT][,HOST[:PORT]…]/DATABASE";

/**
 * `keyward db copy --to URL`, source = the configured SQLite database. Prints one `table<TAB>rows`
 * line per table on stdout and messages on stderr; returns the exit code.
 */
export async function runDbCommand(args: string[], sqlitePath: string, logger?: Logger): Promise<number> {
  const [sub, ...rest] = args;
  const i = rest.indexOf("--to");
  const to = i >= 0 ? rest[i + 1] : rest.find((a) => a.startsWith("--to="))?.slice("--to=".length);
  if (sub !== "copy" || !to) {
    console.error(DB_USAGE);
    return 2;
  }
  const target = parsePgUrl(to);
  if ("error" in target) {
    console.error(`--to ${target.error}\n${DB_USAGE}`);
    return 2;
  }
  try {
    const report = await copySqliteToPostgres({ sqlitePath, targetUrl: to, ...(logger ? { logger } : {}) });
    for (const t of report.tables) console.log(`${t.name}\t${t.rows}`);
    const total = report.tables.reduce((s, t) => s + t.rows, 0);
    console.error(
      `Copied ${total} rows in ${report.tables.length} tables from ${sqlitePath} to ${describePgUrl(to)}; row counts verified. ` +
        `Start the nodes with DATABASE_URL set to it and the same master key (RELEASE_KEY_ENCRYPTION_KEY, or the key file in DATA_DIR).`,
    );
    return 0;
  } catch (e) {
    const prefix = e instanceof CopyRefusedError ? "refused" : "failed";
    console.error(`db copy ${prefix}: ${e instanceof Error ? e.message : String(e)}`);
    return 1;
  }
}
