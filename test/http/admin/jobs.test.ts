// GET /admin/system/jobs and POST /admin/system/jobs/{name}/run (the auth matrix covers callers).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { pollRun } from "../../support/expiry-checks";
import { createTestApp, type TestApp } from "../../support/app";
import { catalog, post } from "../../support/license-api";
import { V1, expectError } from "./helpers";
import { newId } from "../../../src/shared/ids";
import type { SharedRateLimiter } from "../../../src/modules/abuse/rate-limit.sqlite";

const DAY = 86_400_000;

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const NAMES = ["deliver-outbox", "deliver-webhooks", "expire-floating", "lifecycle", "metered-sync", "prune-abuse", "prune-idempotency", "prune-sessions", "prune-history"];

describe("job passes", () => {
  test("the status view lists every pass, never run yet", async () => {
    const res = await t.request("GET", `${V1}/admin/system/jobs`);
    expect(res.status).toBe(200);
    expect(res.body.data.items.map((j: { name: string }) => j.name)).toEqual(NAMES);
    expect(res.body.data.items[2]).toEqual({
      name: "expire-floating",
      description: expect.any(String),
      schedule: "* * * * *",
      running: false,
      lease_owner: null,
      lease_until: null,
      fence: 0,
      last_slot_at: null,
      last_started_at: null,
      last_finished_at: null,
      last_result: null,
    });
  });

  test("run now: expire-floating deletes expired sessions and reports the count; the status view shows the run", async () => {
    const a = await catalog(t, { floating: true, maxActivations: 5, floatingTimeout: 10 });
    const b = await catalog(t, { floating: true, maxActivations: 5, floatingTimeout: 10 });
    expect((await post(t, "/license/floating/checkout", { license_key: a.key, identifier: "gone-1" })).status).toBe(200);
    expect((await post(t, "/license/floating/checkout", { license_key: b.key, identifier: "gone-2" })).status).toBe(200);
    t.clock.advance(11 * 60_000);
    expect((await post(t, "/license/floating/checkout", { license_key: b.key, identifier: "live" })).status).toBe(200);
    // Checkout dropped license b's own expired session; license a's is left to the job.
    const startedAt = t.clock.now().toISOString();
    const res = await t.request("POST", `${V1}/admin/system/jobs/expire-floating/run`);
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({
      name: "expire-floating",
      trigger: "admin",
      status: "ok",
      fence: 1,
      started_at: startedAt,
      finished_at: startedAt,
      result: { expired: 1 },
      error: null,
      recorded: true,
    });
    expect((await t.request("POST", `${V1}/admin/system/jobs/expire-floating/run`)).body.data).toMatchObject({ fence: 2, result: { expired: 0 } });

    const status = (await t.request("GET", `${V1}/admin/system/jobs`)).body.data.items.find((j: { name: string }) => j.name === "expire-floating");
    expect(status).toMatchObject({
      running: false,
      lease_owner: null,
      lease_until: null,
      fence: 2,
      // Admin runs do not claim scheduled slots.
      last_slot_at: null,
      last_started_at: startedAt,
      last_finished_at: startedAt,
      last_result: { trigger: "admin", status: "ok", result: { expired: 0 }, error: null, duration_ms: 0 },
    });
  });

  test("deliver-outbox hands due messages to the registered handler", async () => {
    const delivered: string[] = [];
    const fanOut = t.deps.outboxHandlers.event;
    t.deps.outboxHandlers.event = async (m) => void delivered.push(m.topic);
    try {
      // Earlier tests' changes recorded events of their own: start from an empty outbox.
      await t.exec("DELETE FROM outbox");
      await t.deps.repos.outbox.enqueue({ kind: "event", topic: "license.revoked", payload: {}, at: t.clock.now() });
      const res = await t.request("POST", `${V1}/admin/system/jobs/deliver-outbox/run`);
      expect(res.body.data).toMatchObject({ status: "ok", result: { claimed: 1, sent: 1, retried: 0, gave_up: 0, lost: 0 } });
      expect(delivered).toEqual(["license.revoked"]);
    } finally {
      t.deps.outboxHandlers.event = fanOut;
    }
  });

  test("a long pass (lifecycle) run from the jobs route starts in the background: 202, a Location, the run's counts when polled", async () => {
    const u = await createTestApp();
    try {
      const res = await u.request("POST", `${V1}/admin/system/jobs/lifecycle/run`);
      expect(res.status).toBe(202);
      expect(res.body.data).toMatchObject({ name: "lifecycle", status: "running", finished_at: null, result: null });
      const location = res.headers.get("location");
      expect(location).toBe(`${V1}/admin/system/jobs/lifecycle/runs/${res.body.data.fence}`);
      const run = await pollRun(u, location!);
      expect(run).toMatchObject({ name: "lifecycle", fence: res.body.data.fence, status: "ok", result: { scanned: 0, trials_expired: 0 } });
      // A short pass still answers with its result.
      expect((await u.request("POST", `${V1}/admin/system/jobs/prune-idempotency/run`)).status).toBe(200);
    } finally {
      await u.close();
    }
  });

  test("prune-abuse and prune-idempotency delete only what is past its memory", async () => {
    const u = await createTestApp();
    try {
      const run = async (name: string) => (await u.request("POST", `${V1}/admin/system/jobs/${name}/run`)).body.data.result;
      const { key } = await catalog(u);
      // One lockout-state row (a failed lookup), rate-limit counters (public requests, flushed), and
      // one Idempotency-Key record.
      expect((await post(u, "/license/activate", { license_key: "KW-NOPE-NOPE-NOPE", identifier: "d1" })).status).toBe(404);
      expect((await post(u, "/license/activate", { license_key: key, identifier: "d1" }, { "idempotency-key": "k-1" })).status).toBe(200);
      // The SQLite limiter writes its counts in batches; PostgreSQL's writes each hit at once.
      (u.deps.rateLimiter as Partial<SharedRateLimiter>).flush?.();
      expect(await run("prune-abuse")).toEqual({ lockouts: 0, rate_limit_counters: 0 });
      expect(await run("prune-idempotency")).toEqual({ deleted: 0 });
      // Counters older than two one-minute windows go; the address is remembered for a day.
      u.clock.advance(3 * 60_000);
      expect(await run("prune-abuse")).toEqual({ lockouts: 0, rate_limit_counters: 1 });
      u.clock.advance(24 * 60 * 60_000);
      expect(await run("prune-abuse")).toEqual({ lockouts: 1, rate_limit_counters: 0 });
      expect(await run("prune-idempotency")).toEqual({ deleted: 1 });
      expect(await run("prune-idempotency")).toEqual({ deleted: 0 });
    } finally {
      await u.close();
    }
  });

  test("prune-history deletes finished history past the retention, never pending rows, and reports counts per table", async () => {
    const u = await createTestApp();
    try {
      const run = async () => (await u.request("POST", `${V1}/admin/system/jobs/prune-history/run`)).body.data;
      const { license } = await catalog(u);
      const at = u.clock.now();
      const repos = u.deps.repos;
      // History written now: the catalog's events (handed over by deliver-outbox, so sent), an event
      // still pending, a delivered and a retrying webhook delivery, a processed Stripe event, a
      // purchase claim, a sent and a pending metered-billing row.
      await u.request("POST", `${V1}/admin/system/jobs/deliver-outbox/run`);
      const [counted] = await u.exec<{ n: number | string }>("SELECT count(*) AS n FROM outbox WHERE status <> 'pending'");
      const sent = Number(counted!.n);
      expect(sent).toBeGreaterThan(0);
      await repos.outbox.enqueue({ kind: "event", topic: "license.revoked", payload: {}, at });
      await repos.webhooks.createEndpoint(
        {
          id: newId(), url: "https://hooks.example.com/in", description: "", events: ["*"], enabled: true, productId: null,
          secretEncrypted: "v1.sealed", previousSecretEncrypted: null, previousSecretExpiresAt: null, signingKeyEncrypted: null,
          signingPublicKey: null, consecutiveFailures: 0, disabledReason: null, disabledAt: null, createdAt: at, updatedAt: at,
        },
      );
      const endpoint = (await repos.webhooks.listEndpoints({ limit: 1 })).items[0]!;
      const delivery = (status: "delivered" | "pending") => ({
        id: newId(),
        endpointId: endpoint.id,
        eventId: null,
        eventType: "webhook.test",
        body: "{}",
        status,
        attempts: 1,
        nextAttemptAt: status === "pending" ? new Date(at.getTime() + 90 * DAY) : at,
        lastAttemptAt: at,
        lastResponseCode: status === "delivered" ? 200 : 503,
        lastLatencyMs: 5,
        lastResponseBody: null,
        lastError: null,
        createdAt: at,
        deliveredAt: status === "delivered" ? at : null,
      });
      const done = delivery("delivered");
      const retrying = delivery("pending");
      expect(await repos.webhooks.addDeliveries([done, retrying])).toBe(2);
      expect(await repos.payments.claimEvent("evt_http_1", "invoice.paid", "renewed", at)).toBe(true);
      expect(await repos.payments.claimEvent("keyward:purchase:sub_http", "keyward.purchase_issue", "issued", at)).toBe(true);
      const meter = (status: "sent" | "pending") => ({
        id: newId(), licenseId: license.id, feature: "api", eventName: "api_calls", quantity: 1, occurredAt: at,
        status, attempts: 1, nextAttemptAt: status === "pending" ? new Date(at.getTime() + 90 * DAY) : at, lastError: null, sentAt: status === "sent" ? at : null,
      });
      await repos.meterQueue.enqueue(meter("sent"));
      await repos.meterQueue.enqueue(meter("pending"));

      const none = { outbox: 0, webhook_deliveries: 0, stripe_events: 0, meter_queue: 0, capped: 0 };
      // Inside the 30-day retention (the default) nothing goes.
      u.clock.advance(29 * DAY);
      expect(await run()).toMatchObject({ name: "prune-history", status: "ok", result: none });
      // Past it, the finished rows go; the Stripe event id too (30 days is also its floor).
      u.clock.advance(2 * DAY);
      expect((await run()).result).toEqual({ outbox: sent, webhook_deliveries: 1, stripe_events: 1, meter_queue: 1, capped: 0 });
      expect((await run()).result).toEqual(none);

      // What stays: the pending event (the events log shows it), the retrying delivery (the delivery
      // log shows it), the purchase claim (still refuses a second claim), the pending meter row.
      const events = (await u.request("GET", `${V1}/admin/events?limit=100`)).body.data.items;
      expect(events.map((e: { type: string }) => e.type)).toContain("license.revoked");
      const log = (await u.request("GET", `${V1}/admin/webhooks/${endpoint.id}/deliveries`)).body.data.items;
      expect(log.map((d: { id: string }) => d.id)).toEqual([retrying.id]);
      expect(await repos.payments.claimEvent("keyward:purchase:sub_http", "keyward.purchase_issue", "issued", u.clock.now())).toBe(false);
      expect((await repos.meterQueue.listByLicense(license.id)).map((r) => r.status)).toEqual(["pending"]);
      const status = (await u.request("GET", `${V1}/admin/system/jobs`)).body.data.items.find((j: { name: string }) => j.name === "prune-history");
      expect(status).toMatchObject({ schedule: "41 * * * *", last_result: { trigger: "admin", status: "ok", result: none } });
    } finally {
      await u.close();
    }
  });

  test("unknown pass → 404 NOT_FOUND", async () => {
    expectError(await t.request("POST", `${V1}/admin/system/jobs/no-such-job/run`), 404, "NOT_FOUND");
  });

  test("409 CONFLICT while another node holds the lease; the status view shows the holder", async () => {
    const now = t.clock.now();
    const until = new Date(now.getTime() + 60_000);
    expect(await t.deps.repos.jobLeases.claim("prune-idempotency", "other-node:1:x", now, until, now)).not.toBeNull();
    const res = await t.request("POST", `${V1}/admin/system/jobs/prune-idempotency/run`);
    expectError(res, 409, "CONFLICT");
    expect(res.body.error.details).toEqual({ job: "prune-idempotency" });
    const status = (await t.request("GET", `${V1}/admin/system/jobs`)).body.data.items.find((j: { name: string }) => j.name === "prune-idempotency");
    expect(status).toMatchObject({ running: true, lease_owner: "other-node:1:x", lease_until: until.toISOString(), last_slot_at: now.toISOString() });
    // Once that lease has expired, an admin run takes over.
    t.clock.advance(60_000);
    expect((await t.request("GET", `${V1}/admin/system/jobs`)).body.data.items.find((j: { name: string }) => j.name === "prune-idempotency").running).toBe(false);
    expect((await t.request("POST", `${V1}/admin/system/jobs/prune-idempotency/run`)).status).toBe(200);
  });

  test("a product-bound admin key is refused (system-wide)", async () => {
    const { product } = await catalog(t);
    const key = await t.apiKey(["admin"], product.id);
    expectError(await t.request("GET", `${V1}/admin/system/jobs`, { key }), 403, "PRODUCT_SCOPE_MISMATCH");
    expectError(await t.request("POST", `${V1}/admin/system/jobs/prune-abuse/run`, { key }), 403, "PRODUCT_SCOPE_MISMATCH");
  });
});
