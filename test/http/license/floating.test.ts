import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createTestApp, type TestApp } from "../../support/app";
import { catalog, patchLicense, post } from "../../support/license-api";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp(); // clock: 2026-11-21T08:00:00Z
});
afterAll(() => t.close());

const MIN = 60_000;
const floating = async (over = {}) => await catalog(t, { floating: true, maxActivations: 2, floatingTimeout: 10, ...over });

describe("floating sessions", () => {
  test("checkout opens a session that lasts floating_timeout", async () => {
    const { key } = await floating();
    const res = await post(t, "/license/floating/checkout", { license_key: key, identifier: "ws-1", label: "Workstation 1" });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({
      session_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      expires_at: new Date(t.clock.nowMs() + 10 * MIN).toISOString(),
      active_sessions: 1,
      max_sessions: 2,
    });
  });

  test("re-checkout of the same identifier refreshes the session and takes no seat", async () => {
    const { key } = await floating();
    const a = await post(t, "/license/floating/checkout", { license_key: key, identifier: "ws-1" });
    t.clock.advance(5 * MIN);
    const b = await post(t, "/license/floating/checkout", { license_key: key, identifier: "ws-1" });
    expect(b.body.data.session_id).toBe(a.body.data.session_id);
    expect(b.body.data.active_sessions).toBe(1);
    expect(b.body.data.expires_at).toBe(new Date(t.clock.nowMs() + 10 * MIN).toISOString());
  });

  test("409 FLOATING_LIMIT with details when every seat is taken; checkin frees one", async () => {
    const { key } = await floating();
    await post(t, "/license/floating/checkout", { license_key: key, identifier: "a" });
    await post(t, "/license/floating/checkout", { license_key: key, identifier: "b" });
    const full = await post(t, "/license/floating/checkout", { license_key: key, identifier: "c" });
    expect(full.status).toBe(409);
    expect(full.body.error).toMatchObject({ code: "FLOATING_LIMIT", details: { active_sessions: 2, max_sessions: 2 } });
    const released = await post(t, "/license/floating/checkin", { license_key: key, identifier: "a" });
    expect(released.status).toBe(200);
    expect(released.body.data).toMatchObject({ released: true, active_sessions: 1, max_sessions: 2 });
    expect((await post(t, "/license/floating/checkout", { license_key: key, identifier: "c" })).body.data.active_sessions).toBe(2);
    // A second checkin of the released session is the collapsed 404.
    expect((await post(t, "/license/floating/checkin", { license_key: key, identifier: "a" })).status).toBe(404);
  });

  test("heartbeat extends; without it the session expires, stops counting, and is never revived", async () => {
    const { key } = await floating({ maxActivations: 1 });
    const first = await post(t, "/license/floating/checkout", { license_key: key, identifier: "a" });
    t.clock.advance(9 * MIN);
    const hb = await post(t, "/license/floating/heartbeat", { license_key: key, identifier: "a" });
    expect(hb.status).toBe(200);
    expect(hb.body.data).toEqual({
      session_id: first.body.data.session_id,
      expires_at: new Date(t.clock.nowMs() + 10 * MIN).toISOString(),
      active_sessions: 1,
      max_sessions: 1,
    });
    t.clock.advance(9 * MIN); // still alive thanks to the heartbeat
    expect((await post(t, "/license/floating/checkout", { license_key: key, identifier: "b" })).status).toBe(409);
    t.clock.advance(1 * MIN); // exactly expires_at: expired
    const dead = await post(t, "/license/floating/heartbeat", { license_key: key, identifier: "a" });
    expect(dead.status).toBe(404);
    expect(dead.body.error.code).toBe("LICENSE_NOT_FOUND");
    // The seat is free for another identifier; the old session stays dead.
    const b = await post(t, "/license/floating/checkout", { license_key: key, identifier: "b" });
    expect(b.status).toBe(200);
    expect((await post(t, "/license/floating/heartbeat", { license_key: key, identifier: "a" })).status).toBe(404);
    // "a" can only check out again — a new session — once b is released.
    await post(t, "/license/floating/checkin", { license_key: key, identifier: "b" });
    const again = await post(t, "/license/floating/checkout", { license_key: key, identifier: "a" });
    expect(again.body.data.session_id).not.toBe(first.body.data.session_id);
  });

  test("max_activations null means unlimited seats (max_sessions null)", async () => {
    const { key } = await floating({ maxActivations: null });
    for (let i = 0; i < 5; i++) {
      const res = await post(t, "/license/floating/checkout", { license_key: key, identifier: `s${i}` });
      expect(res.body.data).toMatchObject({ active_sessions: i + 1, max_sessions: null });
    }
  });

  test("a plan without floating refuses checkout with 403; heartbeat/checkin find nothing", async () => {
    const { key } = await catalog(t, { floating: false });
    const res = await post(t, "/license/floating/checkout", { license_key: key, identifier: "a" });
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe("FORBIDDEN");
    expect((await post(t, "/license/floating/heartbeat", { license_key: key, identifier: "a" })).status).toBe(404);
  });

  test("unknown, other-product and unusable keys are the collapsed 404 on every floating route", async () => {
    const { key, license } = await floating();
    await post(t, "/license/floating/checkout", { license_key: key, identifier: "a" });
    const other = await catalog(t);
    const reference = (await post(t, "/license/verify", { license_key: "junk", identifier: "x" })).text;
    const routes = ["/license/floating/checkout", "/license/floating/heartbeat", "/license/floating/checkin"];
    for (const path of routes) {
      for (const body of [
        { license_key: "KW-AAAAAAAA-AAAAAAAA-AAAAAAAA-AAAAAAAA", identifier: "a" },
        { license_key: "junk", identifier: "a" },
        { license_key: key, identifier: "a", product_id: other.product.id },
      ]) {
        const res = await post(t, path, body);
        expect(res.status).toBe(404);
        expect(res.text).toBe(reference);
      }
    }
    // Heartbeat/checkin with an identifier that has no session look exactly like an unknown key.
    expect((await post(t, "/license/floating/heartbeat", { license_key: key, identifier: "zzz" })).text).toBe(reference);
    await patchLicense(t, license.id, { status: "suspended" });
    for (const path of routes) expect((await post(t, path, { license_key: key, identifier: "a" })).text).toBe(reference);
  });

  test("revoke drops floating sessions", async () => {
    const { key, license } = await floating();
    await post(t, "/license/floating/checkout", { license_key: key, identifier: "a" });
    expect(await t.deps.repos.floating.listActive(license.id, t.clock.now())).toHaveLength(1);
    await patchLicense(t, license.id, { status: "revoked" }, { clearActivations: true });
    expect(await t.deps.repos.floating.listActive(license.id, t.clock.now())).toHaveLength(0);
  });

  test("identifier length limit applies", async () => {
    const { key } = await floating();
    const res = await post(t, "/license/floating/checkout", { license_key: key, identifier: "x".repeat(t.deps.config.identifierMaxLength + 1) });
    expect(res.status).toBe(400);
  });
});
