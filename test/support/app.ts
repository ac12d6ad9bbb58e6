// Test harness: a real app on a real SQLite file in a fresh temp directory per call, a fixed clock,
// and an admin API key. Use `request` for app.handle() tests and `listen` for real HTTP tests.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { loadConfig } from "../../src/config";
import { createDeps, sqliteHandleOf } from "../../src/container";
import { createApp } from "../../src/app";
import { startServer, type RunningServer } from "../../src/server";
import { fixedClock, type FixedClock } from "../../src/shared/clock";
import { createLogger } from "../../src/shared/logger";
import { SYSTEM_ACTOR, type Scope } from "../../src/shared/actor";
import { createApiKey } from "../../src/modules/api-keys/service";
import { signIn as openSession } from "../../src/modules/sessions/service";
import type { AdminRole } from "../../src/modules/users/repo";
import type { Deps } from "../../src/deps";
import type { DbHandle } from "../../src/db/client";
import type { Engine } from "../../src/db/store";
import postgres from "postgres";
import { test } from "bun:test";
import { freshPgDatabase } from "./pg";
import { stopBackgroundRuns } from "../../src/jobs/runner";

export interface TestResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface RequestOptions {
  body?: unknown;
  /** API key to send as Bearer; defaults to the admin key for /admin paths. Pass null for none. */
  key?: string | null;
  headers?: Record<string, string>;
  /** Send `body` as-is (string) instead of JSON-encoding it. */
  raw?: boolean;
  /**
   * A Cookie header (e.g. from t.signIn). With it, no API key is sent unless `key` is given, and
   * the request carries `Origin: <BASE_URL's origin>` (a same-site browser) unless `headers` set
   * Origin or Sec-Fetch-Site.
   */
  cookie?: string;
}

export interface TestApp {
  app: ReturnType<typeof createApp>;
  deps: Deps;
  clock: FixedClock;
  dataDir: string;
  adminKey: string;
  apiKey(scopes: Scope[], productId?: string | null): Promise<string>;
  /**
   * Signs `email` in (as POST /auth/dev-login would) and returns the Cookie header value
   * `session=…`; `role` also gives the user that admin role.
   */
  signIn(email: string, opts?: { role?: AdminRole | null }): Promise<string>;
  /** BASE_URL's origin: the Origin header of a same-site browser request. */
  origin: string;
  /** The SQLite handle behind deps (tests of SQLite itself); throws on PostgreSQL. */
  sqlite: DbHandle;
  /** The engine this app runs on (KEYWARD_TEST_ENGINE; default sqlite). */
  engine: Engine;
  /**
   * Raw SQL on either engine, for tests that plant or inspect rows: `$1`-style placeholders; Date
   * parameters become epoch ms on SQLite and timestamptz on PostgreSQL, booleans 1/0 on SQLite.
   */
  exec<T = Record<string, unknown>>(text: string, params?: unknown[]): Promise<T[]>;
  request<T = any>(method: string, path: string, opts?: RequestOptions): Promise<TestResponse<T>>;
  /** Starts a real listening server on 127.0.0.1 with an ephemeral port (same deps). */
  listen(): RunningServer;
  close(): Promise<void>;
}

export function testEnv(dataDir: string, env: Record<string, string> = {}): Record<string, string> {
  return {
    NODE_ENV: "test",
    DATA_DIR: dataDir,
    HOST: "127.0.0.1",
    PORT: "0",
    RELEASE_KEY_ENCRYPTION_KEY: randomBytes(32).toString("hex"),
    LOG_LEVEL: "silent",
    ...env,
  };
}

/**
 * The engine HTTP tests run on: `sqlite` (default), or `postgres` when KEYWARD_TEST_ENGINE=postgres
 * (the PostgreSQL pass of `npm test`, which needs TEST_DATABASE_URL): each app then gets its own
 * fresh database, dropped on close.
 */
export function testEngine(): Engine {
  return process.env.KEYWARD_TEST_ENGINE === "postgres" ? "postgres" : "sqlite";
}

/** `test` on SQLite, `test.skip` on the PostgreSQL pass: for tests of SQLite itself (query plans, files). */
export const sqliteOnlyTest: typeof test = testEngine() === "sqlite" ? test : test.skip;

export async function createTestApp(
  opts: {
    env?: Record<string, string>;
    clock?: FixedClock;
    dataDir?: string;
    label?: string;
    /** A second node on another app's database: its data directory, and its DATABASE_URL if any. */
    sameDatabaseAs?: TestApp;
    /** The engine, whatever KEYWARD_TEST_ENGINE says (tests that run each engine themselves). */
    engine?: Engine;
  } = {},
): Promise<TestApp> {
  const other = opts.sameDatabaseAs;
  if (other?.deps.config.databaseUrl) opts = { ...opts, env: { DATABASE_URL: other.deps.config.databaseUrl, ...opts.env } };
  const dataDir = opts.dataDir ?? other?.dataDir ?? mkdtempSync(join(tmpdir(), "keyward-test-"));
  const engine = opts.engine ?? testEngine();
  // A caller that passes DATABASE_URL itself (several nodes on one database) keeps it.
  const pgDb = engine === "postgres" && !opts.env?.DATABASE_URL ? await freshPgDatabase(opts.label ?? "http", { migrated: true }) : null;
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig(testEnv(dataDir, { ...(pgDb ? { DATABASE_URL: pgDb.url } : {}), ...opts.env }));
  } catch (e) {
    // A test of a refused configuration: its database and directory are not left behind.
    await pgDb?.drop();
    if (!opts.dataDir && !other) rmSync(dataDir, { recursive: true, force: true });
    throw e;
  }
  const clock = opts.clock ?? fixedClock();
  let deps: Deps;
  try {
    deps = await createDeps(config, clock, createLogger(config.logLevel));
  } catch (e) {
    await pgDb?.drop();
    throw e;
  }
  const app = createApp(deps);
  const sqlite = sqliteHandleOf(deps.db);
  let pgPool: ReturnType<typeof postgres> | null = null;
  const apiKey = async (scopes: Scope[], productId: string | null = null) =>
    (await createApiKey(deps, SYSTEM_ACTOR, { name: `test ${scopes.join(",")}`, scopes, productId })).key;
  const adminKey = await apiKey(["admin"]);
  const servers: RunningServer[] = [];

  return {
    app,
    deps,
    clock,
    dataDir,
    adminKey,
    engine: config.databaseUrl ? "postgres" : "sqlite",
    async exec<T>(text: string, params: unknown[] = []): Promise<T[]> {
      if (sqlite) {
        const values = params.map((p) => (p instanceof Date ? p.getTime() : typeof p === "boolean" ? (p ? 1 : 0) : p));
        return sqlite.sqlite.query(text.replace(/\$(\d+)/g, "?$1")).all(...(values as never[])) as T[];
      }
      const pool = pgPool ??= postgres(config.databaseUrl!, { max: 1, onnotice: () => {} });
      const values = params.map((p) => (p instanceof Date ? p.toISOString() : p));
      return (await pool.unsafe(text, values as never[])) as unknown as T[];
    },
    get sqlite(): DbHandle {
      if (!sqlite) throw new Error("this test inspects SQLite rows directly; it does not run on PostgreSQL");
      return sqlite;
    },
    apiKey,
    origin: new URL(config.baseUrl).origin,
    async signIn(email, o = {}) {
      const { user, setCookie } = await deps.db.transaction((tx) => openSession(tx, { email, method: "dev", ip: "127.0.0.1", userAgent: "test" }));
      if (o.role !== undefined) {
        await deps.repos.users.updateRole(user.id, o.role);
      }
      return setCookie.split(";")[0]!;
    },
    async request(method, path, o = {}) {
      const headers: Record<string, string> = { ...o.headers };
      if (o.cookie !== undefined) {
        headers.cookie = o.cookie;
        if (!Object.keys(headers).some((h) => ["origin", "sec-fetch-site"].includes(h.toLowerCase()))) headers.origin = new URL(config.baseUrl).origin;
      }
      const key = o.key === undefined ? (path.includes("/admin/") && o.cookie === undefined ? adminKey : null) : o.key;
      if (key) headers.authorization = `Bearer ${key}`;
      let body: string | undefined;
      if (o.body !== undefined) {
        body = o.raw ? String(o.body) : JSON.stringify(o.body);
        if (!Object.keys(headers).some((h) => h.toLowerCase() === "content-type")) headers["content-type"] = "application/json";
      }
      const res = await app.handle(new Request(`http://localhost${path}`, { method, headers, body }));
      const text = await res.text();
      let parsed: unknown = text;
      try {
        parsed = text ? JSON.parse(text) : null;
      } catch {
        // non-JSON (feeds): keep text
      }
      return { status: res.status, headers: res.headers, body: parsed as any, text };
    },
    listen() {
      const s = startServer(deps);
      servers.push(s);
      return s;
    },
    async close() {
      for (const s of servers) await s.stop().catch(() => undefined);
      await stopBackgroundRuns(deps);
      await deps.db.close();
      await pgPool?.end({ timeout: 5 });
      await pgDb?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
