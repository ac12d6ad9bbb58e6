// PostgreSQL for tests: TEST_DATABASE_URL names a server (and a database to connect to for admin
// statements); each test file creates its own throwaway database there and drops it afterwards.
// Suites that need PostgreSQL skip, with one visible line, when TEST_DATABASE_URL is unset.
import postgres from "postgres";

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

/** Creates the empty database `name` on the server of `base` (also used by the benches). */
export async function createScratchDatabase(base: string, name: string): Promise<ScratchDatabase> {
  const admin = postgres(base, { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe(`CREATE DATABASE "${name}"`);
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

export async function freshPgDatabase(label: string): Promise<ScratchDatabase> {
  const base = pgTestUrl();
  if (!base) throw new Error("freshPgDatabase needs TEST_DATABASE_URL");
  return createScratchDatabase(base, testDatabaseName(label));
}
