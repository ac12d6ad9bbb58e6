// Webhooks leave at once, and one slow receiver holds up no other (issue 25, points 1 and 2): with the
// delivery worker running (the scheduler with a cron that never fires, so no pass runs), against real
// receivers on 127.0.0.1 — one that fails twice then succeeds, one that accepts connections and never
// answers. Runs on SQLite and, with KEYWARD_TEST_ENGINE=postgres, on PostgreSQL.
import { afterEach, expect, test } from "bun:test";
import { createServer, type Socket } from "node:net";
import { createTestApp, type TestApp } from "../../support/app";
import { runningClock } from "../../support/running-clock";
import { startWebhookReceiver, type WebhookReceiver } from "../../support/webhook-receiver";
import { makeCatalog, makeLicense } from "../../support/factories";
import { startScheduler } from "../../../src/jobs/scheduler";
import type { CronScheduler } from "../../../src/jobs/cron";
import { newDelivery } from "../../../src/modules/webhooks/handler";
import { SECOND } from "../../../src/shared/clock";

const V1 = "/api/v1";
const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  while (cleanup.length) await cleanup.pop()!();
});

async function setup(env: Record<string, string> = {}): Promise<{ t: TestApp; r: WebhookReceiver }> {
  const t = await createTestApp({ env: { WEBHOOK_ALLOW_PRIVATE: "true", ...env }, clock: runningClock() });
  cleanup.push(() => t.close());
  const r = startWebhookReceiver();
  cleanup.push(() => r.stop());
  return { t, r };
}

function startWorker(t: TestApp): void {
  const cron: CronScheduler = () => ({ stop: () => {} });
  const scheduler = startScheduler(t.deps, { cron });
  cleanup.push(() => scheduler.stop());
}

async function endpoint(t: TestApp, body: Record<string, unknown>): Promise<{ id: string }> {
  const res = await t.request("POST", `${V1}/admin/webhooks`, { body });
  expect(res.status).toBe(201);
  return res.body.data;
}

/** A TCP server that accepts every connection and never answers; counts the connections open now. */
async function startSilentServer(): Promise<{ url: string; open(): number; stop(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server = createServer((s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
    s.on("error", () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  let stopped = false;
  return {
    url: `http://127.0.0.1:${port}/never`,
    open: () => sockets.size,
    stop: async () => {
      if (stopped) return;
      stopped = true;
      // The requests fail at once, so the worker stops without waiting for their timeouts.
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

async function until(what: string, ok: () => boolean, ms = 10 * SECOND): Promise<void> {
  const start = performance.now();
  while (!ok()) {
    if (performance.now() - start > ms) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(10);
  }
}

test("a receiver that fails twice gets its three attempts within 10 s, all with the same webhook-id (WEBHOOK_RETRY_BASE_SECONDS=1)", async () => {
  const { t, r } = await setup({ WEBHOOK_RETRY_BASE_SECONDS: "1" });
  r.on("/flaky", (_h, n) => new Response(n <= 2 ? "not yet" : "ok", { status: n <= 2 ? 503 : 200 }));
  const e = await endpoint(t, { url: r.url("/flaky"), events: ["license.created"] });
  startWorker(t);
  const since = performance.now();
  // Issues one license: one license.created event.
  await makeCatalog(t.deps);
  await until("three attempts", () => r.at("/flaky").length >= 3);
  const elapsed = performance.now() - since;
  const attempts = r.at("/flaky");
  expect(new Set(attempts.map((h) => h.id)).size).toBe(1);
  expect(elapsed).toBeLessThanOrEqual(10 * SECOND);
  // Recorded as one delivery, delivered on its third attempt.
  let items: { status: string; attempts: number }[] = [];
  const start = performance.now();
  while (items[0]?.status !== "delivered" && performance.now() - start < 5 * SECOND) {
    items = (await t.request("GET", `${V1}/admin/webhooks/${e.id}/deliveries`)).body.data.items;
    await Bun.sleep(20);
  }
  expect(items).toMatchObject([{ status: "delivered", attempts: 3 }]);
});

test("60 deliveries to a receiver that never answers: a healthy endpoint's event arrives within 2 s of being written", async () => {
  const { t, r } = await setup();
  const silent = await startSilentServer();
  cleanup.push(() => silent.stop());
  const slow = await endpoint(t, { url: silent.url, events: ["webhook.test"] });
  await endpoint(t, { url: r.url("/healthy"), events: ["license.created"] });
  const now = t.clock.now();
  await t.deps.repos.webhooks.addDeliveries(
    Array.from({ length: 60 }, (_, i) => newDelivery({ endpointId: slow.id, eventId: null, eventType: "webhook.test", body: `{"n":${i}}`, at: now })),
  );
  startWorker(t);
  // The slow endpoint holds its share of the slots (WEBHOOK_ENDPOINT_CONCURRENCY, 8), no more.
  await until("the slow endpoint's requests", () => silent.open() >= t.deps.config.webhookEndpointConcurrency);
  await Bun.sleep(300);
  expect(silent.open()).toBe(t.deps.config.webhookEndpointConcurrency);

  const { product, plan } = await makeCatalog(t.deps);
  await until("the catalogue's license.created", () => r.at("/healthy").length >= 1);
  const since = performance.now();
  await makeLicense(t.deps, { productId: product.id, planId: plan.id });
  await until("the healthy endpoint's event", () => r.at("/healthy").length >= 2);
  expect(performance.now() - since).toBeLessThanOrEqual(2 * SECOND);
  expect(JSON.parse(r.at("/healthy")[1]!.body)).toMatchObject({ type: "license.created" });
  await silent.stop();
});

test("the deliver-webhooks pass too: 60 due to a never-answering receiver do not hold up a healthy endpoint's delivery due after them", async () => {
  const { t, r } = await setup();
  const silent = await startSilentServer();
  cleanup.push(() => silent.stop());
  const slow = await endpoint(t, { url: silent.url, events: ["webhook.test"] });
  const healthy = await endpoint(t, { url: r.url("/healthy"), events: ["webhook.test"] });
  const now = t.clock.nowMs();
  // The slow endpoint's 60 are due first, the healthy one's last.
  await t.deps.repos.webhooks.addDeliveries([
    ...Array.from({ length: 60 }, (_, i) => newDelivery({ endpointId: slow.id, eventId: null, eventType: "webhook.test", body: `{"n":${i}}`, at: new Date(now - 60_000 + i) })),
    newDelivery({ endpointId: healthy.id, eventId: null, eventType: "webhook.test", body: "{}", at: new Date(now) }),
  ]);
  const since = performance.now();
  const pass = t.request("POST", `${V1}/admin/system/jobs/deliver-webhooks/run`);
  await until("the healthy endpoint's delivery", () => r.at("/healthy").length >= 1);
  expect(performance.now() - since).toBeLessThanOrEqual(2 * SECOND);
  expect(silent.open()).toBeLessThanOrEqual(t.deps.config.webhookEndpointConcurrency);
  await silent.stop();
  expect((await pass).body.data.result).toMatchObject({ delivered: 1 });
});

test("slow endpoints that together take every slot of the node still leave a healthy endpoint its own (WEBHOOK_CONCURRENCY=4, WEBHOOK_ENDPOINT_CONCURRENCY=2)", async () => {
  const { t, r } = await setup({ WEBHOOK_CONCURRENCY: "4", WEBHOOK_ENDPOINT_CONCURRENCY: "2" });
  const silent = await startSilentServer();
  cleanup.push(() => silent.stop());
  const now = t.clock.now();
  for (let i = 0; i < 3; i++) {
    const slow = await endpoint(t, { url: `${silent.url}/${i}`, events: ["webhook.test"] });
    await t.deps.repos.webhooks.addDeliveries(
      Array.from({ length: 5 }, (_, n) => newDelivery({ endpointId: slow.id, eventId: null, eventType: "webhook.test", body: `{"n":${n}}`, at: now })),
    );
  }
  await endpoint(t, { url: r.url("/healthy"), events: ["license.created"] });
  startWorker(t);
  // Four slots in all, two per endpoint: the third slow endpoint gets its reserved one, five in flight.
  await until("the slow endpoints' requests", () => silent.open() >= 5);
  await Bun.sleep(300);
  expect(silent.open()).toBe(5);
  const since = performance.now();
  await makeCatalog(t.deps);
  await until("the healthy endpoint's event", () => r.at("/healthy").length >= 1);
  expect(performance.now() - since).toBeLessThanOrEqual(2 * SECOND);
  await silent.stop();
});
