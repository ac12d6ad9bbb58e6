import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createTestApp, type TestApp } from "../../support/app";
import { catalog, feature, post, quota } from "../../support/license-api";
import fixtures from "../../support/route-fixtures/license-api";
import { listActiveFloatingSessions } from "../../../src/modules/floating/service";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp(); // clock: 2026-11-21T08:00:00Z
});
afterAll(() => t.close());

const audit = async (licenseId: string, action: string) =>
  ((await t.request("GET", `/api/v1/admin/audit?entity_id=${licenseId}&action=${action}`)).body.data.items as any[]);

describe("GET /admin/licenses/:id/usage and POST …/usage/reset", () => {
  test("lists every quota feature with its current-period counter; reset zeroes and is audited", async () => {
    const { license, key } = await catalog(t, {}, [feature("export"), quota("api", 100, "daily"), quota("builds", 5)]);
    await post(t, "/license/usage", { license_key: key, feature: "api", quantity: 40 });
    await post(t, "/license/usage", { license_key: key, feature: "builds", quantity: 2 });
    const res = await t.request("GET", `/api/v1/admin/licenses/${license.id}/usage`);
    expect(res.status).toBe(200);
    expect(res.body.data.items).toEqual([
      { feature: "api", used: 40, limit: 100, remaining: 60, period: "daily", period_key: "2026-11-21", resets_at: "2026-11-22T00:00:00.000Z" },
      { feature: "builds", used: 2, limit: 5, remaining: 3, period: "monthly", period_key: "2026-11", resets_at: "2026-12-01T00:00:00.000Z" },
    ]);

    const one = await t.request("POST", `/api/v1/admin/licenses/${license.id}/usage/reset`, { body: { feature: "api" } });
    expect(one.status).toBe(200);
    expect(one.body.data.items).toEqual([expect.objectContaining({ feature: "api", used: 0, remaining: 100 })]);
    expect((await post(t, "/license/usage/status", { license_key: key, feature: "builds" })).body.data.used).toBe(2);
    const rows = await audit(license.id, "license.usage_reset");
    expect(rows).toHaveLength(1);
    expect(rows[0].changes).toEqual({ feature: "api", reset: [{ feature: "api", period_key: "2026-11-21", used: 40 }] });

    const all = await t.request("POST", `/api/v1/admin/licenses/${license.id}/usage/reset`);
    expect(all.status).toBe(200);
    expect(all.body.data.items.map((i: any) => i.used)).toEqual([0, 0]);
    expect(await audit(license.id, "license.usage_reset")).toHaveLength(2);
  });

  test("reset of a feature that is not a quota is 400; unknown license 404", async () => {
    const { license } = await catalog(t, {}, [feature("export")]);
    expect((await t.request("POST", `/api/v1/admin/licenses/${license.id}/usage/reset`, { body: { feature: "export" } })).status).toBe(400);
    expect((await t.request("GET", `/api/v1/admin/licenses/00000000-0000-4000-8000-000000000000/usage`)).status).toBe(404);
  });
});

describe("GET /admin/licenses/:id/floating-sessions", () => {
  test("lists live sessions only", async () => {
    const { license, key } = await catalog(t, { floating: true, maxActivations: 5, floatingTimeout: 10 });
    await post(t, "/license/floating/checkout", { license_key: key, identifier: "old" });
    t.clock.advance(6 * 60_000);
    await post(t, "/license/floating/checkout", { license_key: key, identifier: "new", label: "New box" });
    t.clock.advance(5 * 60_000); // "old" expired, "new" alive
    const res = await t.request("GET", `/api/v1/admin/licenses/${license.id}/floating-sessions`);
    expect(res.status).toBe(200);
    expect(res.body.data.items).toEqual([
      {
        session_id: expect.any(String),
        identifier: "new",
        label: "New box",
        created_at: new Date(t.clock.nowMs() - 5 * 60_000).toISOString(),
        heartbeat_at: new Date(t.clock.nowMs() - 5 * 60_000).toISOString(),
        expires_at: new Date(t.clock.nowMs() + 5 * 60_000).toISOString(),
      },
    ]);
    expect((await listActiveFloatingSessions(t.deps, license.id)).map((s) => s.identifier)).toEqual(["new"]);
  });

  test("the license detail shows the same live sessions and the activations", async () => {
    const { license, key } = await catalog(t, { floating: true, maxActivations: 5, floatingTimeout: 10 });
    await post(t, "/license/activate", { license_key: key, identifier: "desk-1", label: "Desk" });
    await post(t, "/license/floating/checkout", { license_key: key, identifier: "stale" });
    t.clock.advance(11 * 60_000); // "stale" expired
    await post(t, "/license/floating/checkout", { license_key: key, identifier: "live", label: "Live box" });
    const res = await t.request("GET", `/api/v1/admin/licenses/${license.id}`);
    expect(res.status).toBe(200);
    expect(res.body.data.floating_sessions.map((s: { identifier: string }) => s.identifier)).toEqual(["live"]);
    expect(res.body.data.floating_sessions[0].label).toBe("Live box");
    expect(res.body.data.activations.map((a: { identifier: string; label: string }) => [a.identifier, a.label])).toEqual([["desk-1", "Desk"]]);
  });
});

describe("DELETE /admin/licenses/:id/activations/:activation_id", () => {
  test("removes the activation, frees its slot, and is audited", async () => {
    const { license, key } = await catalog(t, { maxActivations: 1 });
    await post(t, "/license/activate", { license_key: key, identifier: "lost-laptop" });
    expect((await post(t, "/license/activate", { license_key: key, identifier: "new-laptop" })).status).toBe(409);
    const [a] = await t.deps.repos.activations.listByLicense(license.id);
    const res = await t.request("DELETE", `/api/v1/admin/licenses/${license.id}/activations/${a!.id}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, data: {} });
    expect((await post(t, "/license/verify", { license_key: key, identifier: "lost-laptop" })).status).toBe(404);
    expect((await post(t, "/license/activate", { license_key: key, identifier: "new-laptop" })).status).toBe(200);
    const rows = await audit(license.id, "activation.remove");
    expect(rows).toHaveLength(1);
    expect(rows[0].changes).toMatchObject({ activation_id: a!.id, identifier: "lost-laptop" });
    // Gone now: 404.
    expect((await t.request("DELETE", `/api/v1/admin/licenses/${license.id}/activations/${a!.id}`)).status).toBe(404);
  });

  test("an activation of another license is 404", async () => {
    const a = await catalog(t);
    const b = await catalog(t);
    await post(t, "/license/activate", { license_key: a.key, identifier: "d" });
    const [act] = await t.deps.repos.activations.listByLicense(a.license.id);
    expect((await t.request("DELETE", `/api/v1/admin/licenses/${b.license.id}/activations/${act!.id}`)).status).toBe(404);
    expect(await t.deps.repos.activations.listByLicense(a.license.id)).toHaveLength(1);
  });
});

describe("auth on these admin routes", () => {
  for (const [route, fixture] of Object.entries(fixtures)) {
    const [method, path] = route.split(" ") as [string, string];
    const url = (params: Record<string, string> = {}) => path.replace(/:(\w+)/g, (_, k: string) => params[k]!);
    test(`${route}: admin and licenses:write pass; releases:write, no key, other-product key refused`, async () => {
      const product = (await catalog(t)).product;
      const ctx = { t, product };
      const send = async (key: string | null) => {
        const req = await fixture.build(ctx);
        return t.request(method, url(req.params), { key, body: req.body });
      };
      expect((await send(t.adminKey)).status).toBeLessThan(300);
      expect((await send(await t.apiKey(["licenses:write"]))).status).toBeLessThan(300);
      expect((await send(await t.apiKey(["licenses:write"], product.id))).status).toBeLessThan(300);
      expect((await send(await t.apiKey(["releases:write"]))).status).toBe(403);
      expect((await send(null)).status).toBe(401);
      const otherProduct = (await catalog(t)).product;
      const mismatch = await send(await t.apiKey(["licenses:write"], otherProduct.id));
      expect(mismatch.status).toBe(403);
      expect(mismatch.body.error.code).toBe("PRODUCT_SCOPE_MISMATCH");
    });
  }

  test("every admin route of this branch has a fixture", async () => {
    const mine = (await t.app.routes())
      .map((r) => `${r.method} ${r.path}`)
      .filter((r) => /\/admin\/licenses\/:id\/(usage|floating-sessions|activations)/.test(r));
    expect(mine.sort()).toEqual(Object.keys(fixtures).sort());
  });
});

describe("a license's activations page (GET /admin/licenses/:id/activations; the license view holds the first 100)", () => {
  test("a plan without max_activations: the view holds 100 and a cursor, the route pages the rest oldest first, ties at one instant in id order", async () => {
    const { license, key } = await catalog(t, { maxActivations: null });
    // 103 devices: three at each instant, so pages split ties (same created_at, ordered by id).
    const made: string[] = [];
    for (let i = 0; i < 103; i++) {
      if (i % 3 === 0) t.clock.advance(1000);
      const res = await post(t, "/license/activate", { license_key: key, identifier: `device-${String(i).padStart(3, "0")}` });
      expect(res.status).toBe(200);
      made.push(`device-${String(i).padStart(3, "0")}`);
    }
    const all = await t.deps.repos.activations.listByLicense(license.id);
    expect(all).toHaveLength(103);
    const order = all.map((a) => a.identifier);

    const view = (await t.request("GET", `/api/v1/admin/licenses/${license.id}`)).body.data;
    expect(view.activations.map((a: any) => a.identifier)).toEqual(order.slice(0, 100));
    expect(typeof view.activations_next_cursor).toBe("string");
    const rest = await t.request("GET", `/api/v1/admin/licenses/${license.id}/activations?cursor=${view.activations_next_cursor}`);
    expect(rest.status).toBe(200);
    expect(rest.body.data).toEqual({ items: all.slice(100).map((a) => expect.objectContaining({ id: a.id, identifier: a.identifier })), next_cursor: null });

    // Pages of 2 walk every activation once, in (created_at, id) order.
    const seen: string[] = [];
    let cursor: string | null = null;
    for (let n = 0; n < 100; n++) {
      const res: { status: number; body: any } = await t.request("GET", `/api/v1/admin/licenses/${license.id}/activations?limit=2${cursor ? `&cursor=${cursor}` : ""}`);
      expect(res.status).toBe(200);
      expect(res.body.data.items.length).toBeLessThanOrEqual(2);
      seen.push(...res.body.data.items.map((a: any) => a.identifier));
      cursor = res.body.data.next_cursor;
      if (!cursor) break;
    }
    expect(seen).toEqual(order);
    expect([...seen].sort()).toEqual([...made].sort());
    const sorted = [...all].sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    expect(order).toEqual(sorted.map((a) => a.identifier));
  });

  test("a license with few activations: the view holds them all and no cursor; bad paging input is 400; another product's key is 403; unknown license 404", async () => {
    const { license, key, product } = await catalog(t, { maxActivations: 3 });
    await post(t, "/license/activate", { license_key: key, identifier: "only-one" });
    const view = (await t.request("GET", `/api/v1/admin/licenses/${license.id}`)).body.data;
    expect(view.activations.map((a: any) => a.identifier)).toEqual(["only-one"]);
    expect(view.activations_next_cursor).toBeNull();
    expect((await t.request("GET", `/api/v1/admin/licenses/${license.id}/activations`)).body.data).toEqual({
      items: [expect.objectContaining({ identifier: "only-one", identifier_type: "device" })],
      next_cursor: null,
    });
    for (const q of ["limit=0", "limit=101", "cursor=not-a-cursor", "extra=1"]) {
      const res = await t.request("GET", `/api/v1/admin/licenses/${license.id}/activations?${q}`);
      expect([q, res.status, res.body.error?.code]).toEqual([q, 400, "VALIDATION_ERROR"]);
    }
    const other = await catalog(t);
    const bound = await t.apiKey(["licenses:write"], other.product.id);
    expect((await t.request("GET", `/api/v1/admin/licenses/${license.id}/activations`, { key: bound })).status).toBe(403);
    expect((await t.request("GET", `/api/v1/admin/licenses/${product.id}/activations`)).status).toBe(404);
  });
});
