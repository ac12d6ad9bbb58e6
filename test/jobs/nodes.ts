// "Nodes" for job tests on either engine: several independent connections (pools on PostgreSQL,
// connections to the same file on SQLite), each with its own repository set and Deps.
import { loadConfig } from "../../src/config";
import { createSqliteRepos } from "../../src/container";
import { openDatabase } from "../../src/db/client";
import type { Deps, Repos } from "../../src/deps";
import { createPgRepos } from "../../src/repos.pg";
import type { Clock } from "../../src/shared/clock";
import { createLogger } from "../../src/shared/logger";
import { createOutboxNudger } from "../../src/modules/outbox/nudge";
import type { Opened } from "../contract/harness";
import { repoFor } from "../contract/repos";
import { morePools } from "../contract/support-pg";

/** The Deps a job pass or the delivery loop uses; the rest is never touched by them. */
export function jobDeps(repos: Repos, clock: Clock, over: Partial<Deps> = {}): Deps {
  return {
    repos,
    clock,
    config: loadConfig({ NODE_ENV: "test" }),
    logger: createLogger("silent"),
    outboxHandlers: {},
    outboxNudge: createOutboxNudger(),
    ...over,
  } as Deps;
}

/** `n` repository sets over the opened database, each on its own connection; the first is o's own. */
export async function nodeRepos(o: Opened, n: number): Promise<{ repos: Repos[]; close(): Promise<void> }> {
  if (o.sqlite) {
    const extra = Array.from({ length: n - 1 }, () => openDatabase(o.sqlite!.sqlite.filename));
    return {
      repos: [repoFor(o), ...extra.map((h) => createSqliteRepos(h))],
      close: async () => {
        for (const h of extra) await h.close();
      },
    };
  }
  const pools = await morePools(o, n - 1);
  return {
    repos: [repoFor(o), ...pools.map((p) => createPgRepos(p) as Repos)],
    close: async () => {
      for (const p of pools) await p.close();
    },
  };
}
