// GET /admin/system/jobs and POST /admin/system/jobs/{name}/run (the auth matrix covers callers).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createTestApp, type TestApp } from "../../support/app";
import { catalog, post } from "../../support/license-api";
import { V1, expectError } from "./helpers";
import type { SharedRateLimiter } from "../../../src/modules/abuse/rate-limit.sqlite";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const NAMES = ["deliver-outbox", "deliver-webhooks", "expire-floating", "lifecycle", "metered-sync", "prune-abuse", "prune-idempotency", "prune-sessions"];

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
