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
import type { Deps } from "../../src/deps";
import type { DbHandle } from "../../src/db/client";

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
}

export interface TestApp {
  app: ReturnType<typeof createApp>;
  deps: Deps;
  clock: FixedClock;
  dataDir: string;
  adminKey: string;
  apiKey(scopes: Scope[], productId?: string | null): Promise<string>;
  /** The SQLite handle behind deps (tests that inspect rows directly); throws on PostgreSQL. */
  sqlite: DbHandle;
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

export async function createTestApp(opts: { env?: Record<string, string>; clock?: FixedClock; dataDir?: string } = {}): Promise<TestApp> {
  const dataDir = opts.dataDir ?? mkdtempSync(join(tmpdir(), "keyward-test-"));
  const config = loadConfig(testEnv(dataDir, opts.env));
  const clock = opts.clock ?? fixedClock();
  const deps = await createDeps(config, clock, createLogger(config.logLevel));
  const app = createApp(deps);
  const sqlite = sqliteHandleOf(deps.db);
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
    get sqlite(): DbHandle {
      if (!sqlite) throw new Error("this test inspects SQLite rows directly; it does not run on PostgreSQL");
      return sqlite;
    },
    apiKey,
    async request(method, path, o = {}) {
      const headers: Record<string, string> = { ...o.headers };
      const key = o.key === undefined ? (path.includes("/admin/") ? adminKey : null) : o.key;
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
      await deps.db.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
