// PostgreSQL for tests: TEST_DATABASE_URL names a server (and a database to connect to for admin
// statements); each test file creates its own throwaway database there and drops it afterwards.
// Suites that need PostgreSQL skip, with one visible line, when TEST_DATABASE_URL is unset.
import postgres from "postgres";
import { hostname } from "node:os";
import { runPgMigrations } from "../../src/db/migrate.pg";
import { PG_MIGRATIONS } from "../../src/db/migrations-pg.gen";

export function pgTestUrl(): string | null {
  const url = process.env.TEST_DATABASE_URL;
  return url && url.trim() !== "" ? url.trim() : null;
}

/** Database name from a label: lowercase [a-z0-9_], `kwt_` prefix, random suffix, ≤ 63 bytes. */
export function testDatabaseName(label: string): string {
  const clean = label
    .toLowerCase()
    .replace(/[^a-z0-9_]+/g, "_")
    .replace(/^_+|_+$/g, "");
  const suffix = crypto.randomUUID().replaceAll("-", "").slice(0, 12);
  const head = `kwt_${clean}`.slice(0, 63 - suffix.length - 1);
  return `${head}_${suffix}`;
}

export interface ScratchDatabase {
  url: string;
  name: string;
  /** Drops it (connections are terminated); a second call does nothing. */
  drop(): Promise<void>;
}

/** Creates the database `name` on the server of `base`, empty or a copy of `template` (also used by the benches). */
export async function createScratchDatabase(base: string, name: string, template?: string): Promise<ScratchDatabase> {
  const admin = postgres(base, { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe(template ? `CREATE DATABASE "${name}" TEMPLATE "${template}"` : `CREATE DATABASE "${name}"`);
  } finally {
    await admin.end({ timeout: 5 });
  }
  const url = new URL(base);
  url.pathname = `/${name}`;
  let dropped = false;
  return {
    url: url.toString(),
    name,
    async drop() {
      if (dropped) return;
      dropped = true;
      const sql = postgres(base, { max: 1, onnotice: () => {} });
      try {
        await sql.unsafe(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      } finally {
        await sql.end({ timeout: 5 });
      }
    },
  };
}

/**
 * A throwaway database for one test file. Empty by default; with `migrated`, a copy of a template
 * database that has every migration applied (the schema as `runPgMigrations` leaves it), so the
 * app's own migration run finds nothing to do. Migrating each database took about 0.45 s, and the
 * suite creates a few hundred of them. The next copy is made while the test runs (one ahead).
 */
export async function freshPgDatabase(label: string, opts: { migrated?: boolean } = {}): Promise<ScratchDatabase> {
  const base = pgTestUrl();
  if (!base) throw new Error("freshPgDatabase needs TEST_DATABASE_URL");
  if (!opts.migrated) return createScratchDatabase(base, testDatabaseName(label));
  const template = await migratedTemplate(base);
  // The copy made ahead, if any, and the next one started now: the copy (a few hundred ms) then
  // overlaps the test that uses this one. A copy made ahead that failed is simply made again.
  const next = ahead ?? madeAhead(base, template);
  ahead = madeAhead(base, template);
  try {
    return await next;
  } catch {
    return createScratchDatabase(base, testDatabaseName(label), template);
  }
}

/**
 * Migrated copies made ahead are named for this machine and process, so a later run can drop the
 * one a finished process left unused (the last one it made ahead) without touching a live one.
 */
const AHEAD_PREFIX = "kwt_next_";
const HOST_TAG = new Bun.CryptoHasher("sha256").update(hostname()).digest("hex").slice(0, 6);
let ahead: Promise<ScratchDatabase> | null = null;

function madeAhead(base: string, template: string): Promise<ScratchDatabase> {
  const made = createScratchDatabase(base, `${AHEAD_PREFIX}${HOST_TAG}_${process.pid}_${crypto.randomUUID().replaceAll("-", "").slice(0, 8)}`, template);
  made.catch(() => undefined);
  return made;
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as { code?: string }).code === "EPERM";
  }
}

/** Drops the copies made ahead by processes of this machine that have ended. */
async function dropAbandonedCopies(admin: postgres.Sql): Promise<void> {
  const rows = await admin<{ datname: string }[]>`SELECT datname FROM pg_database WHERE datname LIKE ${`${AHEAD_PREFIX}${HOST_TAG}_%`}`;
  for (const { datname } of rows) {
    const pid = Number(datname.slice(AHEAD_PREFIX.length + HOST_TAG.length + 1).split("_")[0]);
    if (Number.isInteger(pid) && pid !== process.pid && !processAlive(pid)) {
      await admin.unsafe(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`).catch(() => undefined);
    }
  }
}

/** The template's name says which migrations it holds: a changed migration set gets a new one. */
const TEMPLATE_PREFIX = "kwt_template_";
const templateName = () =>
  TEMPLATE_PREFIX + new Bun.CryptoHasher("sha256").update(PG_MIGRATIONS.map((m) => `${m.tag}\n${m.sql}`).join("\n")).digest("hex").slice(0, 16);

/** A template's comment holds when it was made, for dropping other sets' templates once stale. */
const TEMPLATE_COMMENT = "keyward test template, made at ";
const STALE_TEMPLATE_MS = 24 * 3600_000;

let template: Promise<string> | null = null;

/**
 * Builds the template once per server and migration set, under a temporary name that is renamed
 * only when it is complete, so any process that finds the name finds a whole schema (two processes
 * building at once: one rename wins, the other drops its copy). Nobody stays connected to it, which
 * CREATE DATABASE … TEMPLATE requires. Templates of other migration sets are dropped after a day.
 */
function migratedTemplate(base: string): Promise<string> {
  template ??= (async () => {
    const name = templateName();
    const admin = postgres(base, { max: 1, onnotice: () => {} });
    try {
      const [found] = await admin<{ n: number }[]>`SELECT count(*)::int AS n FROM pg_database WHERE datname = ${name}`;
      if (found!.n === 0) {
        const building = await createScratchDatabase(base, `${name}_build_${crypto.randomUUID().replaceAll("-", "").slice(0, 8)}`);
        const sql = postgres(building.url, { max: 1, onnotice: () => {} });
        try {
          await runPgMigrations(sql, Date.now());
        } finally {
          await sql.end({ timeout: 5 });
        }
        try {
          await admin.unsafe(`ALTER DATABASE "${building.name}" RENAME TO "${name}"`);
          await admin.unsafe(`COMMENT ON DATABASE "${name}" IS '${TEMPLATE_COMMENT}${Date.now()}'`);
        } catch {
          await building.drop(); // another process renamed its copy first
        }
      }
      // Templates of other migration sets are dropped once they are a day old: another checkout
      // (a branch with other migrations) may be running its tests from its template right now.
      const stale = await admin<{ datname: string; note: string | null }[]>`
        SELECT datname, shobj_description(oid, 'pg_database') AS note FROM pg_database
        WHERE datname LIKE ${`${TEMPLATE_PREFIX}%`} AND datname <> ${name} AND position('_build_' in datname) = 0`;
      for (const { datname, note } of stale) {
        const made = note?.startsWith(TEMPLATE_COMMENT) ? Number(note.slice(TEMPLATE_COMMENT.length)) : 0;
        if (Date.now() - made > STALE_TEMPLATE_MS) await admin.unsafe(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`).catch(() => undefined);
      }
      await dropAbandonedCopies(admin);
      return name;
    } finally {
      await admin.end({ timeout: 5 });
    }
  })();
  template.catch(() => (template = null));
  return template;
}
