// PostgreSQL for the benches: BENCH_PG_URL (or TEST_DATABASE_URL) names a server and a database to
// connect to for CREATE/DROP DATABASE. Every PostgreSQL run gets fresh databases (`kwbench_…`),
// dropped afterwards; without a URL the PostgreSQL figures print SKIPPED.
import { createScratchDatabase, type ScratchDatabase } from "../../test/support/pg";
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

export type BenchDatabase = ScratchDatabase;

/** A new empty database on the server of `base`; drop() removes it (connections are terminated). */
export function freshBenchDatabase(base: string, label: string): Promise<BenchDatabase> {
  return createScratchDatabase(base, `kwbench_${label}_${randomBytes(5).toString("hex")}`);
}
