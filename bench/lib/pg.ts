// PostgreSQL for the benches: BENCH_PG_URL (or TEST_DATABASE_URL) names a server and a database to
// connect to for CREATE/DROP DATABASE. Every PostgreSQL run gets fresh databases (`kwbench_…`),
// dropped afterwards; without a URL the PostgreSQL figures print SKIPPED.
import postgres from "postgres";
import { randomBytes } from "node:crypto";

export const PG_URL_VARS = "BENCH_PG_URL or TEST_DATABASE_URL";

export function benchPgUrl(): string | null {
  for (const name of ["BENCH_PG_URL", "TEST_DATABASE_URL"]) {
    const v = process.env[name]?.trim();
    if (v) return v;
  }
  return null;
}

export const pgSkipReason = `no PostgreSQL: set ${PG_URL_VARS}=postgres://…`;

export interface BenchDatabase {
  url: string;
  name: string;
  drop(): Promise<void>;
}

/** A new empty database on the server of `base`; drop() removes it (connections are terminated). */
export async function freshBenchDatabase(base: string, label: string): Promise<BenchDatabase> {
  const name = `kwbench_${label}_${randomBytes(5).toString("hex")}`;
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
