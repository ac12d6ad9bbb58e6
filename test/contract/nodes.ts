// Several "nodes" on one PostgreSQL database: independent pools, hence independent connections and
// transactions, like separate server processes. Concurrency tests race repositories built on them.
import { openPostgres, type PgHandle } from "../../src/db/pg";
import type { Repos } from "../../src/deps";
import { createPgRepos } from "../../src/repos.pg";
import type { Opened } from "./harness";

function urlOf(o: Opened): string {
  const opts = o.pg!.sql.options as unknown as { host: string[]; port: number[]; user: string; database: string };
  return `postgres://${encodeURIComponent(opts.user)}@${opts.host[0]}:${opts.port[0]}/${opts.database}`;
}

/** Runs `body` with `count` node repository sets on the opened PostgreSQL database, then closes them. */
export async function withNodes<T>(o: Opened, count: number, body: (nodes: Repos[]) => Promise<T>): Promise<T> {
  const handles: PgHandle[] = Array.from({ length: count }, () => openPostgres(urlOf(o), { max: 4 }));
  try {
    return await body(handles.map((h) => createPgRepos(h) as Repos));
  } finally {
    await Promise.all(handles.map((h) => h.close()));
  }
}
