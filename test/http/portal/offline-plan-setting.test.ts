// The plan setting `portal_offline_activation` (docs/admin-api.md "Plans", docs/portal.md "Offline
// activation"): the portal offers self-service offline activation iff it is on (the default) and the
// plan is not floating. Off: `offered: false`, the option hidden, activate and the license file
// 403 FORBIDDEN; a standing activation is kept (an admin still clears it; verify still finds it) and
// shows again once the setting is back on. Through the HTTP app, on both engines.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { createTestApp, type TestApp } from "../../support/app";
import { post } from "../../support/license-api";
import { makeProduct } from "../../support/factories";
import { portalPost, team, type Team } from "./helpers";

const V1 = "/api/v1";
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ label: "portal-offline-setting" });
});
afterAll(() => t.close());
beforeEach(() => t.clock.advance(2 * 60_000));

const view = (tm: Team, cookie = tm.owner.cookie) => portalPost(t, cookie, "/portal/offline-activation", { license_key: tm.key });
const activate = (tm: Team, identifier: string) => portalPost(t, tm.owner.cookie, "/portal/offline-activation/activate", { license_key: tm.key, identifier });
const licenseFile = (tm: Team) => portalPost(t, tm.member.cookie, "/portal/offline-activation/license-file", { license_key: tm.key });

async function planOf(tm: Team): Promise<string> {
  const res = await t.request("GET", `${V1}/admin/licenses/${tm.licenseId}`);
  expect(res.status).toBe(200);
  return res.body.data.plan_id as string;
}
async function setSetting(planId: string, on: boolean) {
  const res = await t.request("PATCH", `${V1}/admin/plans/${planId}`, { body: { portal_offline_activation: on } });
  expect(res.status).toBe(200);
  expect(res.body.data.portal_offline_activation).toBe(on);
}

describe("plan setting portal_offline_activation", () => {
  test("defaults to true on create; false is stored and shown; a non-boolean is a 400", async () => {
    const product = await makeProduct(t.deps);
    const base = { product_id: product.id, license_type: "perpetual" };
    const plain = await t.request("POST", `${V1}/admin/plans`, { body: { ...base, name: "Default" } });
    expect(plain.status).toBe(201);
    expect(plain.body.data.portal_offline_activation).toBe(true);
    const off = await t.request("POST", `${V1}/admin/plans`, { body: { ...base, name: "No self-service", portal_offline_activation: false } });
    expect(off.status).toBe(201);
    expect(off.body.data.portal_offline_activation).toBe(false);
    expect((await t.request("GET", `${V1}/admin/plans/${off.body.data.id}`)).body.data.portal_offline_activation).toBe(false);
    const bad = await t.request("PATCH", `${V1}/admin/plans/${off.body.data.id}`, { body: { portal_offline_activation: "yes" } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe("VALIDATION_ERROR");
  });

  test("off: not offered and the activation refused (403 FORBIDDEN); back on: offered and accepted", async () => {
    const tm = await team(t);
    const planId = await planOf(tm);
    expect((await view(tm)).body.data).toEqual({ license_id: tm.licenseId, offered: true, available: true, activation: null });

    await setSetting(planId, false);
    for (const cookie of [tm.owner.cookie, tm.admin.cookie, tm.member.cookie]) {
      expect((await view(tm, cookie)).body.data).toEqual({ license_id: tm.licenseId, offered: false, available: false, activation: null });
    }
    const refused = await activate(tm, "BOX-1");
    expect(refused.status).toBe(403);
    expect(refused.body.error).toMatchObject({ code: "FORBIDDEN", message: "This license's plan does not offer self-service offline activation." });
    expect((await t.request("GET", `${V1}/admin/licenses/${tm.licenseId}/offline-activations`)).body.data.items).toEqual([]);

    await setSetting(planId, true);
    expect((await view(tm)).body.data).toMatchObject({ offered: true, available: true, activation: null });
    const made = await activate(tm, "BOX-1");
    expect(made.status).toBe(200);
    expect(made.body.data.activation).toMatchObject({ identifier: "BOX-1", cleared_at: null });
  });

  test("turned off with an activation standing: hidden and no license file, but kept (verify finds it; an admin sees it); shown again when back on", async () => {
    const tm = await team(t);
    const planId = await planOf(tm);
    const made = await activate(tm, "KEPT-BOX");
    expect(made.status).toBe(200);

    await setSetting(planId, false);
    expect((await view(tm)).body.data).toEqual({ license_id: tm.licenseId, offered: false, available: false, activation: null });
    const file = await licenseFile(tm);
    expect(file.status).toBe(403);
    expect(file.body.error.code).toBe("FORBIDDEN");
    expect((await post(t, "/license/verify", { license_key: tm.key, identifier: "KEPT-BOX" })).status).toBe(200);
    const listed = (await t.request("GET", `${V1}/admin/licenses/${tm.licenseId}/offline-activations`)).body.data.items;
    expect(listed).toEqual([made.body.data.activation]);

    await setSetting(planId, true);
    expect((await view(tm)).body.data).toMatchObject({ offered: true, available: false, activation: { id: made.body.data.activation.id, identifier: "KEPT-BOX" } });
    expect((await licenseFile(tm)).status).toBe(200);
  });

  test("a floating plan is never offered, whatever the setting", async () => {
    const tm = await team(t, { floating: true });
    const planId = await planOf(tm);
    await setSetting(planId, true);
    expect((await view(tm)).body.data).toMatchObject({ offered: false, available: false });
    const res = await activate(tm, "FLOAT-1");
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe("FORBIDDEN");
  });
});
