// The delivery worker at rest and on shutdown: an idle node asks the database once a second (one
// statement, OutboxRepo.nextDue) and claims nothing; stop() ends the loop and the LISTEN. SQLite,
// and PostgreSQL with KEYWARD_TEST_ENGINE=postgres.
import { afterEach, expect, test } from "bun:test";
import { createTestApp, type TestApp } from "../support/app";
import { runningClock } from "../support/running-clock";
import { startDeliveryWorker, POLL_MS } from "../../src/jobs/delivery-worker";
import { SECOND } from "../../src/shared/clock";

let t: TestApp | undefined;
afterEach(() => t?.close());

test("an idle worker polls about once a second, with one statement, and claims nothing", async () => {
  t = await createTestApp({ clock: runningClock() });
  const calls = { nextDue: 0, claimDue: 0, dueDeliveries: 0 };
  const outbox = t.deps.repos.outbox;
  const webhooks = t.deps.repos.webhooks;
  t.deps.repos.outbox = { ...outbox, nextDue: () => (calls.nextDue++, outbox.nextDue()), claimDue: (i) => (calls.claimDue++, outbox.claimDue(i)) };
  // A webhook claim starts with its read of the due deliveries (webhooks/claims.ts).
  t.deps.repos.webhooks = { ...webhooks, dueDeliveries: (now, window) => (calls.dueDeliveries++, webhooks.dueDeliveries(now, window)) };
  const worker = startDeliveryWorker(t.deps);
  try {
    await Bun.sleep(3 * SECOND + 200);
  } finally {
    await worker.stop();
  }
  expect(POLL_MS).toBe(SECOND);
  // At start, then once a second: 4, give or take a timer on a busy machine.
  expect(calls.nextDue).toBeGreaterThanOrEqual(3);
  expect(calls.nextDue).toBeLessThanOrEqual(5);
  expect(calls.claimDue + calls.dueDeliveries).toBe(0);
  // Stopped: no more polls.
  const after = calls.nextDue;
  await Bun.sleep(1200);
  expect(calls.nextDue).toBe(after);
});
