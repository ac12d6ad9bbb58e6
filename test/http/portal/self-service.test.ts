// Portal self-service over HTTP: the caller's licenses (owned and seated) with key, product, plan,
// status, expiry, support window, role and seat counts; a license's activations; self-service
// deactivation with the admin removal's effects (audit row naming the user, activation.deleted).
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { createTestApp, type TestApp } from "../../support/app";
import { makeLicense, makePlan, makeProduct } from "../../support/factories";
import { post } from "../../support/license-api";
import { accept, lastToken, portalGet, portalPost, signIn, team, uniqueEmail } from "./helpers";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ label: "portal-self-service" });
});
afterAll(() => t.close());
beforeEach(() => t.clock.advance(2 * 60_000));

describe("GET /portal/licenses", () => {
  test("owned licenses (email any case) newest first, then seated ones, each with its details", async () => {
    const me = uniqueEmail("me");
    const product = await makeProduct(t.deps, { name: "Acme Editor" });
    const plan = await makePlan(t.deps, product.id, { name: "Team", maxSeats: 4 });
    const validUntil = new Date(t.clock.nowMs() + 30 * 86_400_000);
    const supportUntil = new Date(t.clock.nowMs() + 365 * 86_400_000);
    const older = await makeLicense(t.deps, { productId: product.id, planId: plan.id, email: me.toUpperCase(), validUntil, supportUntil });
    t.clock.advance(1000);
    const newer = await makeLicense(t.deps, { productId: product.id, planId: plan.id, email: me });
    const seated = await team(t, { name: "Solo", maxSeats: 3 });
    const cookie = await signIn(t, me);
    // Seated on the third as a member.
    await portalPost(t, seated.owner.cookie, "/portal/seats/add", { license_key: seated.key, email: me });
    expect((await accept(t, await lastToken(t, me))).status).toBe(200);
    // Someone else's license is not listed.
    await makeLicense(t.deps, { productId: product.id, planId: plan.id, email: uniqueEmail("other") });

    const res = await portalGet(t, cookie, "/portal/licenses");
    expect(res.status).toBe(200);
    const items = res.body.data.items;
    expect(items.map((l: { license_id: string }) => l.license_id)).toEqual([newer.license.id, older.license.id, seated.licenseId]);
    expect(items[1]).toEqual({
      license_id: older.license.id,
      license_key: older.key,
      product_id: product.id,
      product_name: "Acme Editor",
      plan_id: plan.id,
      plan_name: "Team",
      status: "active",
      valid_until: validUntil.toISOString(),
      support_until: supportUntil.toISOString(),
      role: "owner",
      max_seats: 4,
      used_seats: 0,
    });
    expect(items[2]).toMatchObject({ license_key: seated.key, plan_name: "Solo", role: "member", max_seats: 3, used_seats: 3, valid_until: null, support_until: null });
  });

  test("401 signed out; an empty list for a user with nothing", async () => {
    expect((await portalGet(t, null, "/portal/licenses")).status).toBe(401);
    const res = await portalGet(t, await signIn(t, uniqueEmail("nobody")), "/portal/licenses");
    expect(res.body).toEqual({ success: true, data: { items: [], next_cursor: null } });
  });

  test("pages: owned newest first, then seated in acceptance order, each license once; a license owned and seated is listed as owned", async () => {
    const me = uniqueEmail("pager");
    const product = await makeProduct(t.deps);
    const plan = await makePlan(t.deps, product.id);
    const owned: string[] = [];
    for (let i = 0; i < 5; i++) {
      owned.unshift((await makeLicense(t.deps, { productId: product.id, planId: plan.id, email: me })).license.id);
      t.clock.advance(1000);
    }
    const cookie = await signIn(t, me);
    const seated: string[] = [];
    for (let i = 0; i < 4; i++) {
      const tm = await team(t, { maxSeats: 3 });
      await portalPost(t, tm.owner.cookie, "/portal/seats/add", { license_key: tm.key, email: me });
      expect((await accept(t, await lastToken(t, me))).status).toBe(200);
      seated.push(tm.licenseId);
      t.clock.advance(1000);
    }
    // The second seated license is then handed to me as its owner: listed once, with the owned ones
    // (made after them, so first).
    await t.exec("UPDATE licenses SET email = $1 WHERE id = $2", [me, seated[1]]);
    const expected = [seated[1]!, ...owned, seated[0]!, seated[2]!, seated[3]!];
    for (const limit of [1, 2, 3, 5, 6, 50]) {
      const seen: string[] = [];
      let cursor: string | null = null;
      for (let pages = 0; pages < 20; pages++) {
        const res: { status: number; body: any } = await portalGet(t, cookie, `/portal/licenses?limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`);
        expect(res.status).toBe(200);
        expect(res.body.data.items.length).toBeLessThanOrEqual(limit);
        seen.push(...res.body.data.items.map((l: { license_id: string }) => l.license_id));
        cursor = res.body.data.next_cursor;
        if (!cursor) break;
      }
      expect({ limit, seen }).toEqual({ limit, seen: expected });
    }
  });

  test("a bad cursor or limit is 400", async () => {
    const cookie = await signIn(t, uniqueEmail("badpage"));
    for (const q of ["cursor=x.abc", "cursor=o.bm90LWpzb24", "limit=0", "limit=101", "limit=abc"]) {
      const res = await portalGet(t, cookie, `/portal/licenses?${q}`);
      expect({ q, status: res.status, code: res.body.error?.code }).toEqual({ q, status: 400, code: "VALIDATION_ERROR" });
    }
  });
});

describe("activations", () => {
  test("pages: `limit` and `cursor` walk every activation once, oldest first; bad paging input is 400", async () => {
    const tm = await team(t, { maxActivations: null });
    for (let i = 0; i < 5; i++) expect((await post(t, "/license/activate", { license_key: tm.key, identifier: `m-${i}` })).status).toBe(200);
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res: { status: number; body: any } = await portalPost(t, tm.member.cookie, "/portal/activations", { license_key: tm.key, limit: 2, ...(cursor ? { cursor } : {}) });
      expect(res.status).toBe(200);
      expect(res.body.data.items.length).toBeLessThanOrEqual(2);
      seen.push(...res.body.data.items.map((a: { identifier: string }) => a.identifier));
      cursor = res.body.data.next_cursor;
      pages++;
    } while (cursor && pages < 10);
    expect(seen).toEqual(["m-0", "m-1", "m-2", "m-3", "m-4"]);
    expect(pages).toBe(3);
    const all = await portalPost(t, tm.member.cookie, "/portal/activations", { license_key: tm.key });
    expect(all.body.data.next_cursor).toBeNull();
    expect(all.body.data.items).toHaveLength(5);
    for (const bad of [{ limit: 0 }, { limit: 101 }, { cursor: "nope" }, { limit: "2" }]) {
      const res = await portalPost(t, tm.member.cookie, "/portal/activations", { license_key: tm.key, ...bad });
      expect({ bad, status: res.status, code: res.body.error?.code }).toEqual({ bad, status: 400, code: "VALIDATION_ERROR" });
    }
  });

  test("list, then deactivate a lost machine: the slot is free at once, audited and evented like the admin removal", async () => {
    const tm = await team(t, { maxActivations: 2 });
    for (const id of ["laptop", "desktop"]) expect((await post(t, "/license/activate", { license_key: tm.key, identifier: id, label: id })).status).toBe(200);
    expect((await post(t, "/license/activate", { license_key: tm.key, identifier: "new-laptop" })).status).toBe(409);

    const listed = await portalPost(t, tm.member.cookie, "/portal/activations", { license_key: tm.key });
    expect(listed.status).toBe(200);
    expect(listed.body.data.license_id).toBe(tm.licenseId);
    expect(listed.body.data.items.map((a: { identifier: string; label: string }) => [a.identifier, a.label])).toEqual([
      ["laptop", "laptop"],
      ["desktop", "desktop"],
    ]);
    const laptop = listed.body.data.items[0];
    expect(laptop).toEqual({
      activation_id: expect.any(String),
      identifier: "laptop",
      identifier_type: "device",
      label: "laptop",
      created_at: t.clock.now().toISOString(),
      last_seen_at: t.clock.now().toISOString(), // activation counts as a sighting
    });

    // A member may look but not deactivate.
    const refused = await portalPost(t, tm.member.cookie, "/portal/activations/deactivate", { license_key: tm.key, activation_id: laptop.activation_id });
    expect(refused.status).toBe(404);
    expect(refused.body.error.code).toBe("LICENSE_NOT_FOUND");

    const done = await portalPost(t, tm.admin.cookie, "/portal/activations/deactivate", { license_key: tm.key, activation_id: laptop.activation_id });
    expect(done.status).toBe(200);
    expect(done.body.data).toMatchObject({ activation_id: laptop.activation_id, identifier: "laptop" });
    expect((await post(t, "/license/activate", { license_key: tm.key, identifier: "new-laptop" })).status).toBe(200);
    // The removed machine no longer verifies.
    expect((await post(t, "/license/verify", { license_key: tm.key, identifier: "laptop" })).status).toBe(404);

    const adminId = (await t.exec<{ id: string }>("SELECT id FROM users WHERE email = $1", [tm.admin.email]))[0]!.id;
    const audit = await t.exec<{ actor_type: string; actor_id: string }>(
      "SELECT actor_type, actor_id FROM audit_log WHERE action = 'activation.remove' AND entity_id = $1",
      [tm.licenseId],
    );
    expect(audit).toEqual([{ actor_type: "session", actor_id: adminId }]);
    const events = (await t.exec<{ payload: unknown }>("SELECT payload FROM outbox WHERE topic = 'activation.deleted'"))
      .map((r) => (typeof r.payload === "string" ? JSON.parse(r.payload) : r.payload))
      .filter((e: { data: { activation_id: string } }) => e.data.activation_id === laptop.activation_id);
    expect(events.map((e: { data: { reason: string } }) => e.data.reason)).toEqual(["removed"]);

    // Again, or an activation of another license: 404 NOT_FOUND (the caller may manage this license).
    const again = await portalPost(t, tm.owner.cookie, "/portal/activations/deactivate", { license_key: tm.key, activation_id: laptop.activation_id });
    expect(again.status).toBe(404);
    expect(again.body.error.code).toBe("NOT_FOUND");
  });
});
