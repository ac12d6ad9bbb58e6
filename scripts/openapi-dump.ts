// Writes the OpenAPI document the app serves at /api/v1/openapi.json, for tools that read a file
// (.ci/run lints it with `redocly lint`). The app is built on a throw-away data directory with the
// local storage driver, so every route (including the local storage routes) is listed.
//
//   bun scripts/openapi-dump.ts [--out FILE]     (default: stdout)
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { loadConfig } from "../src/config";
import { createDeps } from "../src/container";
import { createApp } from "../src/app";
import { systemClock } from "../src/shared/clock";
import { createLogger } from "../src/shared/logger";

export const SPEC_PATH = "/api/v1/openapi.json";

/** The served document, parsed. */
export async function dumpOpenApi(): Promise<Record<string, unknown>> {
  const dataDir = mkdtempSync(join(tmpdir(), "keyward-openapi-"));
  const config = loadConfig({
    NODE_ENV: "test",
    DATA_DIR: dataDir,
    RELEASE_KEY_ENCRYPTION_KEY: randomBytes(32).toString("hex"),
    LOG_LEVEL: "silent",
    STORAGE_DRIVER: "local",
  });
  const deps = await createDeps(config, systemClock, createLogger(config.logLevel));
  try {
    const res = await createApp(deps).handle(new Request(`http://localhost${SPEC_PATH}`));
    if (res.status !== 200) throw new Error(`GET ${SPEC_PATH} answered ${res.status}`);
    return (await res.json()) as Record<string, unknown>;
  } finally {
    await deps.db.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

if (import.meta.main) {
  const i = process.argv.indexOf("--out");
  const text = JSON.stringify(await dumpOpenApi(), null, 2) + "\n";
  if (i >= 0 && process.argv[i + 1]) writeFileSync(process.argv[i + 1]!, text);
  else process.stdout.write(text);
}
