// Several Keyward processes on one database: the only place where requests truly race (inside one
// process a SQLite transaction runs without yielding). On SQLite the nodes share one file; on
// PostgreSQL (TEST_DATABASE_URL) one fresh database. A TestApp on the same database plants the
// fixtures and inspects rows.
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Engine } from "../../src/db/store";
import { createTestApp, type TestApp } from "../support/app";
import { fixedClock } from "../../src/shared/clock";
import { freshPgDatabase } from "../support/pg";
import { startKeyward, type RunningKeyward } from "../process/support";
import { startPgBouncer, type PgBouncer } from "../support/pgbouncer";

export interface Cluster {
  engine: Engine;
  t: TestApp;
  nodes: RunningKeyward[];
  /** Node i modulo the cluster size. */
  url(i: number): string;
  /** Starts one more node on the same database (same master key). */
  addNode(): Promise<RunningKeyward>;
  close(): Promise<void>;
}

/**
 * `pooler`: the nodes (not the inspecting TestApp) reach PostgreSQL through a PgBouncer in
 * transaction mode, with `prepare=false` in their DATABASE_URL (see docs/operations.md).
 */
export async function startCluster(engine: Engine, size: number, env: Record<string, string> = {}, opts: { pooler?: boolean } = {}): Promise<Cluster> {
  const masterKey = randomBytes(32).toString("hex");
  const dataDir = mkdtempSync(join(tmpdir(), "keyward-cluster-"));
  const pgDb = engine === "postgres" ? await freshPgDatabase("cluster") : null;
  const dbEnv: Record<string, string> = pgDb ? { DATABASE_URL: pgDb.url } : {};
  // The nodes run on the system clock, so the inspecting app writes at today's time too: a session it
  // signs in (7 days of idle life) was dead on the nodes once the default fixed clock was a week old.
  const t = await createTestApp({ dataDir, engine, clock: fixedClock(Date.now()), env: { RELEASE_KEY_ENCRYPTION_KEY: masterKey, ...dbEnv } });
  let pooler: PgBouncer | null = null;
  if (opts.pooler && pgDb) {
    const direct = new URL(pgDb.url);
    pooler = await startPgBouncer({ hostname: direct.hostname, port: Number(direct.port || 5432) });
    const pooled = new URL(pgDb.url);
    pooled.hostname = "127.0.0.1";
    pooled.port = String(pooler.port);
    pooled.searchParams.set("prepare", "false");
    dbEnv.DATABASE_URL = pooled.toString();
  }
  const nodeEnv = {
    NODE_ENV: "test",
    DATA_DIR: dataDir,
    RELEASE_KEY_ENCRYPTION_KEY: masterKey,
    BF_MAX_FAILS: "5",
    // Nodes may be started on the same address: the limit under test is the resource, not the rate.
    RATE_LIMIT_PUBLIC_PER_MINUTE: "0",
    ...dbEnv,
    ...env,
  };
  const nodes: RunningKeyward[] = [];
  const addNode = async () => {
    const n = await startKeyward({ env: nodeEnv, cwd: dataDir });
    nodes.push(n);
    return n;
  };
  try {
    await Promise.all(Array.from({ length: size }, () => addNode()));
  } catch (e) {
    for (const n of nodes) await n.stop("SIGKILL");
    await t.close();
    await pooler?.stop();
    await pgDb?.drop();
    throw e;
  }
  return {
    engine,
    t,
    nodes,
    url: (i) => nodes[i % nodes.length]!.url,
    addNode,
    async close() {
      for (const n of nodes) await n.stop("SIGKILL");
      await t.close();
      await pooler?.stop();
      await pgDb?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
