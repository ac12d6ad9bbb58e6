// Extra PostgreSQL pools on a contract suite's database: each one is a separate "node".
import { openPostgres, type PgHandle } from "../../src/db/pg";
import type { Opened } from "./harness";

/** The URL of the opened PostgreSQL database (postgres.js keeps its connection options). */
export function pgUrlOf(o: Opened): string {
  const opts = o.pg!.sql.options as unknown as { host: string[]; port: number[]; user: string; database: string };
  return `postgres://${encodeURIComponent(opts.user)}@${opts.host[0]}:${opts.port[0]}/${opts.database}`;
}

/**
 * `n` more pools on the same database, connected before they are returned (so a race starts with
 * every node ready rather than the first one finishing alone); close them after use.
 */
export async function morePools(o: Opened, n: number): Promise<PgHandle[]> {
  const pools = Array.from({ length: n }, () => openPostgres(pgUrlOf(o), { max: 2 }));
  await Promise.all(pools.flatMap((p) => [p.ping(), p.ping()]));
  return pools;
}
