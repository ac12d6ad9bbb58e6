// The lifecycle pass on a thread of its own (src/jobs/pass-thread.ts), as `serve` runs it: through
// POST /admin/system/run-expiry-checks, with its own connection to the same database, the same rules
// (an expiry and each reminder once), the serving thread's checkpointer gate honoured, a shutdown
// stopping it, and a thread that cannot open the database failing the run with the reason. The
// in-process fallback of these apps throws, so a pass that did not run on the thread fails the test.
// Runs on SQLite and, with KEYWARD_TEST_ENGINE=postgres, on PostgreSQL.
import { afterEach, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createTestApp, sqliteOnlyTest, type TestApp } from "../../support/app";
import { makeLicense, makePlan, makeProduct } from "../../support/factories";
import { runExpiryChecks } from "../../support/expiry-checks";
import { DAY, MINUTE } from "../../../src/shared/clock";
import { createPassThreads } from "../../../src/jobs/pass-thread";
import { createBackgroundGate, type BackgroundGate } from "../../../src/db/background-gate.sqlite";
import type { Config } from "../../../src/config";
import { createLogger, type Logger } from "../../../src/shared/logger";

const V1 = "/api/v1";
const T0 = new Date("2026-11-21T08:00:00.000Z");
const at = (ms: number) => new Date(T0.getTime() + ms);

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  while (cleanup.length) await cleanup.pop()!();
});

interface Threaded {
  t: TestApp;
  nudges: () => number;
}

async function app(opts: { gate?: BackgroundGate; config?: (c: Readonly<Config>) => Partial<Config>; logger?: Logger } = {}): Promise<Threaded> {
  const t = await createTestApp();
  cleanup.push(() => t.close());
  t.clock.set(T0);
  let nudges = 0;
  t.deps.passThreads = createPassThreads({
    config: { ...t.deps.config, ...opts.config?.(t.deps.config) },
    logger: opts.logger ?? t.deps.logger,
    gate: opts.gate ?? (t.engine === "sqlite" ? t.sqlite.backgroundGate : null),
    checkpointThread: false,
    nudge: () => nudges++,
    inProcess: () => Promise.reject(new Error("the pass did not run on its thread")),
  });
  return { t, nudges: () => nudges };
}

async function trial(t: TestApp, validUntil: Date) {
  const product = await makeProduct(t.deps, { name: "Acme Editor" });
  const plan = await makePlan(t.deps, product.id, { name: "Trial", licenseType: "trial" });
  return (await makeLicense(t.deps, { productId: product.id, planId: plan.id, validUntil })).license;
}

const status = async (t: TestApp, id: string) => (await t.request("GET", `${V1}/admin/licenses/${id}`)).body.data.status as string;
const outbox = (t: TestApp) => t.exec<{ kind: string; topic: string }>("SELECT kind, topic FROM outbox ORDER BY created_at, id");

test("expires a trial and reminds once, from its own thread, and wakes the node's delivery", async () => {
  const { t, nudges } = await app();
  const ending = await trial(t, at(2 * DAY));
  const reminded = await trial(t, at(9 * DAY));

  t.clock.set(at(2 * DAY + MINUTE));
  const counts = await runExpiryChecks(t);
  expect(counts).toMatchObject({ trials_expired: 1, expiry_reminders: 1 });
  expect(await status(t, ending.id)).toBe("expired");
  expect(await status(t, reminded.id)).toBe("trialing");
  const written = await outbox(t);
  expect(written.filter((r) => r.kind === "email").map((r) => r.topic).sort()).toEqual(["expiry_reminder", "license_expired"]);
  expect(written.filter((r) => r.topic === "license.expired")).toHaveLength(1);
  expect(nudges()).toBeGreaterThanOrEqual(1);

  // A second pass (a new thread, a new connection) finds nothing new.
  const again = await runExpiryChecks(t);
  expect(again).toMatchObject({ trials_expired: 0, expiry_reminders: 0 });
  expect(await outbox(t)).toHaveLength(written.length);
});

test.if(process.platform === "linux")("on SQLite the thread moves itself to idle priority unless BACKGROUND_PRIORITY=normal; on PostgreSQL it keeps its priority", async () => {
  for (const backgroundPriority of ["idle", "normal"] as const) {
    const lines: { msg: string; thread?: string; tid?: number }[] = [];
    const logger = createLogger("debug", (line) => lines.push(JSON.parse(line)));
    const { t } = await app({ logger, config: () => ({ logLevel: "debug", backgroundPriority }) });
    await trial(t, at(DAY));
    t.clock.set(at(2 * DAY));
    expect(await t.deps.passThreads!.lifecycle(t.clock.now())).toMatchObject({ trials_expired: 1 });
    const said = lines.filter((l) => l.thread === "lifecycle" && /priority/.test(l.msg));
    if (backgroundPriority === "idle" && t.engine === "sqlite") {
      expect(said).toEqual([expect.objectContaining({ msg: "the lifecycle thread runs at idle priority", tid: expect.any(Number) })]);
      expect(said[0]!.tid).not.toBe(process.pid);
    } else expect(said).toEqual([]);
  }
});

test("a node shutting down stops the pass on its thread", async () => {
  const { t } = await app();
  await trial(t, at(DAY));
  t.clock.set(at(2 * DAY));
  const stop = new AbortController();
  const pass = t.deps.passThreads!.lifecycle(t.clock.now(), stop.signal);
  stop.abort(new Error("the node is shutting down"));
  await expect(pass).rejects.toThrow("the node is shutting down");
});

test("a thread that cannot open the database fails the pass with the reason", async () => {
  const elsewhere = mkdtempSync(join(tmpdir(), "keyward-not-a-file-"));
  cleanup.push(async () => rmSync(elsewhere, { recursive: true, force: true }));
  const { t } = await app({
    // A directory where the SQLite file should be; on PostgreSQL a database that does not exist.
    config: (c) => ({ databasePath: elsewhere, databaseUrl: c.databaseUrl ? Object.assign(new URL(c.databaseUrl), { pathname: "/keyward_no_such_database" }).toString() : null }),
  });
  await expect(t.deps.passThreads!.lifecycle(t.clock.now())).rejects.toThrow(/keyward_no_such_database|unable to open|directory/i);
});

sqliteOnlyTest("its transactions wait while the checkpoint thread holds background writers", async () => {
  const gate = createBackgroundGate(() => null);
  const { t } = await app({ gate });
  const ending = await trial(t, at(DAY));
  t.clock.set(at(2 * DAY));
  gate.setPaused(true);
  const pass = t.deps.passThreads!.lifecycle(t.clock.now());
  await Bun.sleep(500);
  expect(await status(t, ending.id)).toBe("trialing");
  gate.setPaused(false);
  expect(await pass).toMatchObject({ trials_expired: 1 });
  expect(await status(t, ending.id)).toBe("expired");
});

sqliteOnlyTest("each of its transactions is a turn of the node's background writers: none while the serving thread holds the turn", async () => {
  const gate = createBackgroundGate(() => null);
  const { t } = await app({ gate });
  const ending = await trial(t, at(DAY));
  t.clock.set(at(2 * DAY));
  const word = new Int32Array(gate.shared);
  Atomics.store(word, 0, 1); // the serving thread's turn, as during one of its writes
  const pass = t.deps.passThreads!.lifecycle(t.clock.now());
  await Bun.sleep(500);
  expect(await status(t, ending.id)).toBe("trialing");
  Atomics.store(word, 0, 0);
  Atomics.notify(word, 0);
  expect(await pass).toMatchObject({ trials_expired: 1 });
  expect(await status(t, ending.id)).toBe("expired");
});

sqliteOnlyTest("a pass with nothing due still writes only in turns: its watermark and statistics wait for the serving thread's turn", async () => {
  const gate = createBackgroundGate(() => null);
  const { t } = await app({ gate });
  const word = new Int32Array(gate.shared);
  Atomics.store(word, 0, 1); // the serving thread's turn
  let settled = false;
  const pass = t.deps.passThreads!.lifecycle(t.clock.now()).finally(() => (settled = true));
  await Bun.sleep(500);
  expect(settled).toBe(false);
  expect(await t.deps.repos.lifecycle.watermark()).toBeNull();
  Atomics.store(word, 0, 0);
  Atomics.notify(word, 0);
  expect(await pass).toMatchObject({ scanned: 0 });
  expect(await t.deps.repos.lifecycle.watermark()).toMatchObject({ passedAt: t.clock.now() });
});
