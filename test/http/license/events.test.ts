// Events recorded in the outbox by the changes admins care about (docs/events.md): public activation,
// deactivation, floating checkout / checkin / expiry, quota warning and exhaustion, and admin license
// and release changes. Each is written in the change's own transaction; replays write nothing more.
// Runs on both engines (KEYWARD_TEST_ENGINE=postgres for the PostgreSQL pass).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createTestApp, type TestApp } from "../../support/app";
import { catalog, post, quota } from "../../support/license-api";
import { makePlan } from "../../support/factories";
import { publishRelease } from "../releases/support";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp(); // clock: 2026-11-21T08:00:00Z
});
afterAll(() => t.close());

interface Recorded {
  topic: string;
  payload: { type: string; timestamp: string; data: Record<string, unknown> };
}

/** Event rows (kind "event") whose data names `id` as license or release, oldest first. */
async function eventsFor(id: string): Promise<Recorded[]> {
  const rows = await t.exec<{ topic: string; payload: unknown; created_at: unknown }>("SELECT topic, payload, created_at FROM outbox WHERE kind = 'event'");
  return rows
    .map((r) => ({
      topic: r.topic,
      // JSON text on SQLite, jsonb (already parsed) on PostgreSQL.
      payload: (typeof r.payload === "string" ? JSON.parse(r.payload) : r.payload) as Recorded["payload"],
      at: new Date(r.created_at as string | number).getTime(),
    }))
    .filter((r) => r.payload.data.license_id === id || r.payload.data.release_id === id)
    .sort((a, b) => a.at - b.at || (a.topic < b.topic ? -1 : 1))
    .map(({ topic, payload }) => ({ topic, payload }));
}

const topics = async (id: string) => (await eventsFor(id)).map((e) => e.topic);
const tick = () => t.clock.advance(1000);
const idem = (key: string) => ({ "idempotency-key": key });

describe("public routes record their events in the outbox", () => {
  test("activation.created on a new activation only; activation.deleted on deactivate and admin removal", async () => {
    const { product, license, key } = await catalog(t, { maxActivations: 5 });
    expect(await topics(license.id)).toEqual(["license.created"]);
    tick();
    const activatedAt = t.clock.now();
    expect((await post(t, "/license/activate", { license_key: key, identifier: "dev-a", label: "Laptop" })).status).toBe(200);
    tick();
    // Re-activation of the same identifier: no event.
    expect((await post(t, "/license/activate", { license_key: key, identifier: "dev-a" })).status).toBe(200);
    const events = await eventsFor(license.id);
    expect(events.map((e) => e.topic)).toEqual(["license.created", "activation.created"]);
    const created = events[1]!;
    expect(created.payload).toEqual({
      type: "activation.created",
      timestamp: activatedAt.toISOString(),
      data: { activation_id: expect.any(String), license_id: license.id, product_id: product.id, identifier: "dev-a", identifier_type: "device" },
    });
    expect(JSON.stringify(events)).not.toContain(key);

    tick();
    expect((await post(t, "/license/deactivate", { license_key: key, identifier: "dev-a" })).status).toBe(200);
    // A second deactivate is a 404 and records nothing.
    expect((await post(t, "/license/deactivate", { license_key: key, identifier: "dev-a" })).status).toBe(404);
    tick();
    await post(t, "/license/activate", { license_key: key, identifier: "dev-b", identifier_type: "user" });
    const activationId = (await eventsFor(license.id)).at(-1)!.payload.data.activation_id as string;
    tick();
    const removal = await t.request("DELETE", `/api/v1/admin/licenses/${license.id}/activations/${activationId}`);
    expect(removal.status).toBeLessThan(300);
    const after = await eventsFor(license.id);
    expect(after.map((e) => [e.topic, e.payload.data.identifier, e.payload.data.reason])).toEqual([
      ["license.created", undefined, undefined],
      ["activation.created", "dev-a", undefined],
      ["activation.deleted", "dev-a", "deactivated"],
      ["activation.created", "dev-b", undefined],
      ["activation.deleted", "dev-b", "removed"],
    ]);
    expect(after[2]!.payload.data.activation_id).toBe(created.payload.data.activation_id);
  });

  test("an Idempotency-Key replay of an activation records no second event", async () => {
    const { license, key } = await catalog(t);
    tick();
    const body = { license_key: key, identifier: "dev-idem" };
    const first = await post(t, "/license/activate", body, idem("act-1"));
    const replay = await post(t, "/license/activate", body, idem("act-1"));
    expect(first.status).toBe(200);
    expect(replay.body).toEqual(first.body);
    expect(await topics(license.id)).toEqual(["license.created", "activation.created"]);
  });

  test("floating: checked_out for a new session only, checked_in, and expired from the expire-floating pass", async () => {
    const { product, license, key } = await catalog(t, { floating: true, maxActivations: 1, floatingTimeout: 1 });
    tick();
    const checkout = (identifier: string) => post(t, "/license/floating/checkout", { license_key: key, identifier });
    const openedAt = t.clock.now();
    expect((await checkout("ws-1")).status).toBe(200);
    tick();
    expect((await checkout("ws-1")).status).toBe(200); // refresh: no event
    expect((await checkout("ws-2")).status).toBe(409); // no seat: no event
    tick();
    expect((await post(t, "/license/floating/checkin", { license_key: key, identifier: "ws-1" })).status).toBe(200);
    tick();
    expect((await checkout("ws-2")).status).toBe(200);
    const events = await eventsFor(license.id);
    expect(events.map((e) => [e.topic, e.payload.data.identifier, e.payload.data.active])).toEqual([
      ["license.created", undefined, undefined],
      ["floating.checked_out", "ws-1", 1],
      ["floating.checked_in", "ws-1", 0],
      ["floating.checked_out", "ws-2", 1],
    ]);
    expect(events[1]!.payload.data).toEqual({
      session_id: expect.any(String),
      license_id: license.id,
      product_id: product.id,
      identifier: "ws-1",
      expires_at: new Date(openedAt.getTime() + 60_000).toISOString(),
      active: 1,
      max: 1,
    });
    // Past its one-minute timeout the session is deleted by the job pass, which records the event.
    t.clock.advance(2 * 60_000);
    const run = await t.request("POST", "/api/v1/admin/system/jobs/expire-floating/run");
    expect(run.body.data.result.expired).toBeGreaterThanOrEqual(1);
    const expired = (await eventsFor(license.id)).filter((e) => e.topic === "floating.expired");
    expect(expired.map((e) => [e.payload.data.identifier, e.payload.data.product_id, e.payload.data.session_id])).toEqual([
      ["ws-2", product.id, events[3]!.payload.data.session_id],
    ]);
    // A second pass finds nothing more.
    await t.request("POST", "/api/v1/admin/system/jobs/expire-floating/run");
    expect((await eventsFor(license.id)).filter((e) => e.topic === "floating.expired").length).toBe(1);
  });

  test("quota.warning once, on the report crossing 80 %; quota.exceeded once, on the first refusal of the period", async () => {
    const { product, license, key } = await catalog(t, {}, [quota("api", 10)]);
    const report = (quantity: number, headers: Record<string, string> = {}) =>
      post(t, "/license/usage", { license_key: key, feature: "api", quantity }, headers);
    const quotaEvents = async () => (await eventsFor(license.id)).filter((e) => e.topic.startsWith("quota."));
    tick();
    expect((await report(7)).status).toBe(200); // 70 %
    expect(await quotaEvents()).toEqual([]);
    tick();
    const crossedAt = t.clock.now();
    // 70 % → 80 % with an Idempotency-Key; its replay records nothing more.
    expect((await report(1, idem("use-1"))).status).toBe(200);
    expect((await report(1, idem("use-1"))).status).toBe(200);
    tick();
    expect((await report(1)).status).toBe(200); // 90 %: already past the line
    expect((await quotaEvents()).map((e) => [e.topic, e.payload.data.used])).toEqual([["quota.warning", 8]]);
    expect((await quotaEvents())[0]!.payload).toEqual({
      type: "quota.warning",
      timestamp: crossedAt.toISOString(),
      data: { license_id: license.id, product_id: product.id, feature: "api", period: "monthly", period_key: "2026-11", used: 8, limit: 10 },
    });
    tick();
    expect((await report(2)).status).toBe(429); // first refusal
    tick();
    expect((await report(5)).status).toBe(429); // refused again: no second event
    expect((await report(1)).status).toBe(200); // 100 %: accepted, no event
    expect((await report(1)).status).toBe(429);
    const events = await quotaEvents();
    expect(events.map((e) => [e.topic, e.payload.data.used])).toEqual([
      ["quota.warning", 8],
      ["quota.exceeded", 9],
    ]);
    expect(events[1]!.payload.data).toEqual({
      license_id: license.id,
      product_id: product.id,
      feature: "api",
      period: "monthly",
      period_key: "2026-11",
      used: 9,
      limit: 10,
      requested: 2,
    });
  });

  test("one report that jumps past 80 % warns once; an unlimited quota never records quota events", async () => {
    const { license, key } = await catalog(t, {}, [quota("api", 10), quota("free", null)]);
    tick();
    await post(t, "/license/usage", { license_key: key, feature: "api", quantity: 10 });
    await post(t, "/license/usage", { license_key: key, feature: "free", quantity: 1_000 });
    expect((await eventsFor(license.id)).filter((e) => e.topic.startsWith("quota.")).map((e) => [e.topic, e.payload.data.feature, e.payload.data.used])).toEqual([
      ["quota.warning", "api", 10],
    ]);
  });
});

describe("admin changes record their events", () => {
  test("license.created, suspended, reinstated, plan_changed, updated, revoked", async () => {
    const { product, plan, license } = await catalog(t);
    const other = await makePlan(t.deps, product.id);
    const admin = async (path: string, body?: unknown) => {
      tick();
      const res = await t.request("POST", `/api/v1/admin/licenses/${license.id}${path}`, { body });
      expect(res.status).toBe(200);
    };
    await admin("/suspend");
    await admin("/reinstate");
    await admin("/change-plan", { plan_id: other.id });
    await admin("/valid-until", { valid_until: "2027-06-01T00:00:00Z" });
    await admin("/support-until", { support_until: "2027-06-01T00:00:00Z" });
    await admin("/revoke");
    const events = await eventsFor(license.id);
    expect(events.map((e) => e.topic)).toEqual([
      "license.created",
      "license.suspended",
      "license.reinstated",
      "license.plan_changed",
      "license.updated",
      "license.updated",
      "license.revoked",
    ]);
    expect(events[0]!.payload.data).toEqual({
      license_id: license.id,
      product_id: product.id,
      plan_id: plan.id,
      status: "active",
      valid_until: null,
      support_until: null,
    });
    expect(events[3]!.payload.data).toMatchObject({ plan_id: other.id, previous_plan_id: plan.id });
    expect(events[4]!.payload.data).toMatchObject({ changed: ["valid_until"], valid_until: "2027-06-01T00:00:00.000Z" });
    expect(events[5]!.payload.data).toMatchObject({ changed: ["support_until"], support_until: "2027-06-01T00:00:00.000Z" });
    expect(events[6]!.payload.data).toEqual({
      license_id: license.id,
      product_id: product.id,
      plan_id: other.id,
      status: "revoked",
      valid_until: "2027-06-01T00:00:00.000Z",
      support_until: "2027-06-01T00:00:00.000Z",
      previous_status: "active",
    });
    // A refused action (revoking a revoked license) records nothing.
    tick();
    expect((await t.request("POST", `/api/v1/admin/licenses/${license.id}/revoke`)).status).toBe(409);
    expect((await eventsFor(license.id)).length).toBe(7);
  });

  test("release.published, release.yanked, release.unyanked", async () => {
    const { product } = await catalog(t);
    tick();
    const release = await publishRelease(t, product.id, "1.2.0");
    tick();
    expect((await t.request("POST", `/api/v1/admin/releases/${release.id}/yank`, { body: { reason: "crash on start" } })).status).toBe(200);
    tick();
    expect((await t.request("POST", `/api/v1/admin/releases/${release.id}/unyank`)).status).toBe(200);
    const events = await eventsFor(release.id);
    expect(events.map((e) => [e.topic, e.payload.data.status])).toEqual([
      ["release.published", "published"],
      ["release.yanked", "yanked"],
      ["release.unyanked", "published"],
    ]);
    expect(events[0]!.payload.data).toEqual({
      release_id: release.id,
      product_id: product.id,
      version: "1.2.0",
      channel: "stable",
      status: "published",
      published_at: release.published_at,
    });
    expect(events[1]!.payload.data.reason).toBe("crash on start");
  });
});
