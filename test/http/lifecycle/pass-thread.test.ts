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
import type { Checkpointer } from "../../../src/db/checkpointer.sqlite";
import { createBackgroundGate, type BackgroundGate } from "../../../src/db/background-gate.sqlite";
import type { Config } from "../../../src/config";

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

async function app(opts: { gate?: BackgroundGate; config?: (c: Readonly<Config>) => Partial<Config> } = {}): Promise<Threaded> {
  const t = await createTestApp();
  cleanup.push(() => t.close());
  t.clock.set(T0);
  let nudges = 0;
  t.deps.passThreads = createPassThreads({
    config: { ...t.deps.config, ...opts.config?.(t.deps.config) },
    logger: t.deps.logger,
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

sqliteOnlyTest("its transactions wait while the serving connection's checkpointer holds background writers", async () => {
  let open!: () => void;
  let held: Promise<void> | null = new Promise<void>((resolve) => (open = resolve));
  let asked = 0;
  const checkpointer: Checkpointer = {
    stats: () => ({ running: true, checkpoints: 0, walFrames: 0, pauses: 1 }),
    backgroundWrite: () => {
      asked++;
      return held;
    },
    stop: () => {},
  };
  const { t } = await app({ gate: createBackgroundGate(() => checkpointer) });
  const ending = await trial(t, at(DAY));
  t.clock.set(at(2 * DAY));
  const pass = t.deps.passThreads!.lifecycle(t.clock.now());
  const deadline = Date.now() + 10_000;
  while (asked === 0 && Date.now() < deadline) await Bun.sleep(5);
  expect(asked).toBeGreaterThanOrEqual(1);
  await Bun.sleep(300);
  expect(await status(t, ending.id)).toBe("trialing");
  held = null;
  open();
  expect(await pass).toMatchObject({ trials_expired: 1 });
  expect(await status(t, ending.id)).toBe("expired");
});

sqliteOnlyTest("each of its transactions is a turn of the node's background writers: it waits for the turn out, and the node's writers wait for its", async () => {
  const gate = createBackgroundGate(() => null);
  const { t } = await app({ gate });
  const ending = await trial(t, at(DAY));
  t.clock.set(at(2 * DAY));
  // A turn out (as another thread's transaction would hold): the pass cannot write.
  const releaseOther = await gate.acquire();
  const pass = t.deps.passThreads!.lifecycle(t.clock.now());
  await Bun.sleep(500);
  expect(await status(t, ending.id)).toBe("trialing");
  // The thread asks for its turn as soon as the other is back; while it holds it, a background
  // write of this thread waits (and runs once the thread hands it back).
  let wrote = false;
  releaseOther();
  const order: string[] = [];
  const deadline = Date.now() + 10_000;
  for (;;) {
    // Poll until the thread's turn is out: a write then has to wait.
    const w = gate.write(() => (wrote = true));
    if (!wrote) {
      order.push("waited");
      await w;
      order.push("wrote");
      break;
    }
    wrote = false;
    if (Date.now() > deadline) throw new Error("the thread never held a turn");
    await Bun.sleep(0);
  }
  expect(order).toEqual(["waited", "wrote"]);
  expect(await pass).toMatchObject({ trials_expired: 1 });
});
