// Two Keyward processes on one SQLite file, as DECISIONS allows ("limiter state must be shared by
// all nodes when the DB is shared"). Inside one process our handlers run synchronously, so only
// separate processes truly interleave: this is where the immediate() transactions and the
// idempotency claim's unique constraint have to hold.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import type { Subprocess } from "bun";
import { createTestApp, type TestApp } from "../support/app";
import { catalog, quota } from "../support/license-api";
import { all, postJson, tally } from "./support";

const ROOT = join(import.meta.dir, "../..");
const masterKey = randomBytes(32).toString("hex");
let t: TestApp;
const nodes: { proc: Subprocess<"ignore", "pipe", "inherit">; url: string }[] = [];

async function startNode(env: Record<string, string>): Promise<{ proc: Subprocess<"ignore", "pipe", "inherit">; url: string }> {
  const proc = Bun.spawn([process.execPath, "src/main.ts", "serve"], {
    cwd: ROOT,
    env: { ...env, PATH: process.env.PATH ?? "" },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "inherit",
  });
  const reader = proc.stdout.getReader();
  let buffered = "";
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    const { value, done } = await reader.read();
    if (done) break;
    buffered += new TextDecoder().decode(value);
    const line = buffered.split("\n").find((l) => l.includes('"keyward listening"'));
    if (line) {
      // Keep draining: the node logs every request, and a full pipe would stall it.
      void (async () => {
        while (!(await reader.read()).done);
      })().catch(() => undefined);
      return { proc, url: JSON.parse(line).url as string };
    }
  }
  proc.kill();
  throw new Error(`node did not start: ${buffered}`);
}

beforeAll(async () => {
  t = await createTestApp({ env: { RELEASE_KEY_ENCRYPTION_KEY: masterKey } });
  const env = {
    NODE_ENV: "test",
    DATA_DIR: t.dataDir,
    HOST: "127.0.0.1",
    PORT: "0",
    RELEASE_KEY_ENCRYPTION_KEY: masterKey,
    LOG_LEVEL: "info",
    BF_MAX_FAILS: "5",
  };
  nodes.push(await startNode(env), await startNode(env));
});

afterAll(async () => {
  for (const n of nodes) {
    n.proc.kill();
    await n.proc.exited;
  }
  await t.close();
});

const node = (i: number) => nodes[i % 2]!.url;

test("activations across two nodes never exceed max_activations", async () => {
  const { key, license } = await catalog(t, { maxActivations: 5 });
  const results = await all(120, (i) => postJson(node(i), "/license/activate", { license_key: key, identifier: `d-${i}` }));
  expect(tally(results)).toEqual({ 200: 5, 409: 115 });
  expect(await t.deps.repos.activations.listByLicense(license.id)).toHaveLength(5);
});

test("usage across two nodes never exceeds the quota", async () => {
  const { key } = await catalog(t, {}, [quota("api", 150)]);
  const results = await all(300, (i) => postJson(node(i), "/license/usage", { license_key: key, feature: "api" }));
  expect(tally(results)).toEqual({ 200: 150, 429: 150 });
  expect((await postJson(node(0), "/license/usage/status", { license_key: key, feature: "api" })).body.data.used).toBe(150);
});

test("floating seats across two nodes", async () => {
  const { key } = await catalog(t, { floating: true, maxActivations: 3 });
  const results = await all(60, (i) => postJson(node(i), "/license/floating/checkout", { license_key: key, identifier: `u-${i}` }));
  expect(tally(results)).toEqual({ 200: 3, 409: 57 });
});

test("one Idempotency-Key across two nodes → one effect", async () => {
  const { key } = await catalog(t, {}, [quota("api", 1000)]);
  const body = { license_key: key, feature: "api", quantity: 3 };
  const results = await all(20, (i) => postJson(node(i), "/license/usage", body, { "idempotency-key": "multi-node" }));
  const fresh = results.filter((r) => r.status === 200 && r.headers.get("idempotent-replayed") === null);
  expect(fresh).toHaveLength(1);
  for (const r of results) expect([200, 409]).toContain(r.status);
  expect((await postJson(node(1), "/license/usage/status", { license_key: key, feature: "api" })).body.data.used).toBe(3);
});

test("the brute-force lockout is shared by both nodes", async () => {
  const unknown = { license_key: "KW-AAAAAAAA-AAAAAAAA-AAAAAAAA-AAAAAAAA", identifier: "x" };
  for (let i = 0; i < 5; i++) expect((await postJson(node(i), "/license/activate", unknown)).status).toBe(404);
  for (const i of [0, 1]) expect((await postJson(node(i), "/license/activate", unknown)).status).toBe(429);
});
