// `keyward serve` and the background jobs: on by default (JOBS), off on request; an admin run over
// real HTTP; a clean shutdown with the scheduler running.
import { afterAll, expect, test } from "bun:test";
import { removeTempDirs, runKeyward, startKeyward, tempDir } from "./support";

afterAll(removeTempDirs);

function adminKey(dataDir: string): string {
  const r = runKeyward(["api-key", "create", "--scopes", "admin"], { env: { DATA_DIR: dataDir } });
  expect(r.exitCode).toBe(0);
  return r.stdout.trim();
}

const listening = (stdout: string) => JSON.parse(stdout.split("\n").find((l) => l.includes('"msg":"keyward listening"'))!) as { jobs: boolean };

test("JOBS defaults to on: serve schedules the passes, runs one on demand and stops cleanly", async () => {
  const dataDir = tempDir();
  const key = adminKey(dataDir);
  const k = await startKeyward({ env: { DATA_DIR: dataDir } });
  try {
    expect(listening(k.output().stdout).jobs).toBe(true);
    const res = await fetch(`${k.url}/api/v1/admin/system/jobs/prune-abuse/run`, { method: "POST", headers: { authorization: `Bearer ${key}` } });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { data: unknown }).data).toMatchObject({ name: "prune-abuse", trigger: "admin", status: "ok", fence: 1, recorded: true });
  } finally {
    expect(await k.stop("SIGTERM")).toBe(0);
  }
  expect(k.output().stdout).toContain('"msg":"stopped"');
}, 30_000);

test("JOBS=off: nothing is scheduled", async () => {
  const k = await startKeyward({ env: { DATA_DIR: tempDir(), JOBS: "off" } });
  try {
    expect(listening(k.output().stdout).jobs).toBe(false);
  } finally {
    expect(await k.stop("SIGTERM")).toBe(0);
  }
}, 30_000);
