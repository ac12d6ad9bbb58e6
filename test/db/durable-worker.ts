// Child process of test/db/durable.test.ts, run under strace: writes `count` times between two
// markers, so the test can count the disk syncs those writes made.
//   durable | normal    transactions through the SQLite DataStore's gate, one settings row each
//   issue | plan        POST /admin/licenses | POST /admin/plans through the real app (app.handle)
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { openDatabase } from "../../src/db/client";
import { runMigrations } from "../../src/db/migrate";
import { createSqliteGate } from "../../src/db/transaction.sqlite";
import { loadConfig } from "../../src/config";
import { createDeps } from "../../src/container";
import { createApp } from "../../src/app";
import { systemClock } from "../../src/shared/clock";
import { createLogger } from "../../src/shared/logger";
import { SYSTEM_ACTOR } from "../../src/shared/actor";
import { createApiKey } from "../../src/modules/api-keys/service";

/** A marker strace sees whatever stdout is: a lookup of a path that does not exist. */
const mark = (name: string) => existsSync(`/nonexistent-keyward-${name}`);

const [path, mode, count] = [process.argv[2]!, process.argv[3]!, Number(process.argv[4] ?? 20)];

if (mode === "durable" || mode === "normal") {
  const handle = openDatabase(path);
  runMigrations(handle.sqlite, 1);
  const gate = createSqliteGate(handle);
  const insert = handle.sqlite.query("INSERT INTO settings (key, value, updated_at) VALUES (?, '{}', 1)");
  // Everything before the first marker (migrations, their checkpoint) is not counted.
  mark("BEGIN-COUNT");
  for (let i = 0; i < count; i++) {
    await gate.run(async () => insert.run(`${mode}-${i}`), { durable: mode === "durable" });
  }
  mark("END-COUNT");
} else {
  const dataDir = mkdtempSync(join(tmpdir(), "keyward-durable-app-"));
  const config = loadConfig({ NODE_ENV: "test", DATA_DIR: dataDir, RELEASE_KEY_ENCRYPTION_KEY: randomBytes(32).toString("hex"), LOG_LEVEL: "silent" });
  const deps = await createDeps(config, systemClock, createLogger("silent"));
  const app = createApp(deps);
  const { key } = await createApiKey(deps, SYSTEM_ACTOR, { name: "durable", scopes: ["admin"], productId: null });
  const call = async (path: string, body: unknown) => {
    const res = await app.handle(
      new Request(`http://127.0.0.1/api/v1${path}`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify(body) }),
    );
    if (res.status !== 201) throw new Error(`${path}: ${res.status} ${await res.text()}`);
    return ((await res.json()) as { data: { id: string } }).data;
  };
  const product = await call("/admin/products", { name: "Durable", slug: "durable" });
  const plan = await call("/admin/plans", { product_id: product.id, name: "Base", license_type: "perpetual" });
  mark("BEGIN-COUNT");
  for (let i = 0; i < count; i++) {
    if (mode === "issue") await call("/admin/licenses", { product_id: product.id, plan_id: plan.id, email: `owner${i}@example.com` });
    else await call("/admin/plans", { product_id: product.id, name: `Plan ${i}`, license_type: "perpetual" });
  }
  mark("END-COUNT");
}
process.exit(0);
