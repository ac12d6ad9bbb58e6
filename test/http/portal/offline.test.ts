// Portal self-service offline activation (docs/portal.md "Offline activation"): one per license, for
// plans with device activation (hidden for floating plans), cleared only by an admin; the license
// file download; and what an online verify from that machine answers before and after a clear, a
// suspend, a revoke or an expiry (404 LICENSE_NOT_FOUND). Runs on both engines.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { createHash, createPublicKey, verify as nodeVerify } from "node:crypto";
import { createTestApp, type TestApp } from "../../support/app";
import { decodeToken, patchLicense, post } from "../../support/license-api";
import { SYSTEM_ACTOR } from "../../../src/shared/actor";
import { applyLicenseAction } from "../../../src/modules/licenses/service";
import { portalPost, team, uniqueEmail, signIn } from "./helpers";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ label: "portal-offline" });
});
afterAll(() => t.close());
beforeEach(() => t.clock.advance(2 * 60_000));

const SPKI_PREFIX = Buffer.from("302a300506032b6570032100", "hex");
const fpr = (identifier: string, productId: string) => createHash("sha256").update(`${identifier}:${productId}`).digest("hex").slice(0, 16);

async function signatureValid(token: string): Promise<boolean> {
  const pub = (await t.request("GET", "/api/v1/license/pubkey", { key: null })).body.data.public_key as string;
  const key = createPublicKey({ key: Buffer.concat([SPKI_PREFIX, Buffer.from(pub, "hex")]), format: "der", type: "spki" });
  const [payload, sig] = token.split(".") as [string, string];
  return nodeVerify(null, Buffer.from(payload, "ascii"), key, Buffer.from(sig, "base64url"));
}

const view = (cookie: string, key: string) => portalPost(t, cookie, "/portal/offline-activation", { license_key: key });
const activate = (cookie: string, key: string, identifier: string) => portalPost(t, cookie, "/portal/offline-activation/activate", { license_key: key, identifier });
const verify = (key: string, identifier: string) => post(t, "/license/verify", { license_key: key, identifier });

describe("self-service offline activation", () => {
  test("the owner activates once: token bound by fpr, signed with /license/pubkey, no online activation recorded; listed in the portal and the admin API", async () => {
    const tm = await team(t, { maxActivations: 1 });
    const before = await view(tm.owner.cookie, tm.key);
    expect(before.status).toBe(200);
    expect(before.body.data).toEqual({ license_id: tm.licenseId, offered: true, available: true, activation: null });

    const res = await activate(tm.owner.cookie, tm.key, "AIRGAP-01");
    expect(res.status).toBe(200);
    const d = res.body.data;
    expect(d.fingerprint).toBe(fpr("AIRGAP-01", tm.productId));
    expect(d.perpetual).toBe(true); // the license has no expiry
    expect(d.expires_at).toBe("");
    const claims = decodeToken(d.token);
    expect(claims).toMatchObject({ exp: 0, fpr: d.fingerprint, idn: "AIRGAP-01", lid: tm.licenseId, kid: t.deps.tokenKeys.active().kid });
    expect(await signatureValid(d.token)).toBe(true);
    expect(d.activation).toMatchObject({ identifier: "AIRGAP-01", fingerprint: d.fingerprint, expires_at: null, cleared_at: null, cleared_by: null });
    // No online activation: the one slot is still free.
    expect(await t.deps.repos.activations.listByLicense(tm.licenseId)).toEqual([]);
    expect((await post(t, "/license/activate", { license_key: tm.key, identifier: "online-1" })).status).toBe(200);

    // The portal lists it, for every seat; the admin API too.
    for (const cookie of [tm.owner.cookie, tm.admin.cookie, tm.member.cookie]) {
      const listed = await view(cookie, tm.key);
      expect(listed.body.data).toMatchObject({ offered: true, available: false, activation: { id: d.activation.id, identifier: "AIRGAP-01" } });
    }
    const admin = await t.request("GET", `/api/v1/admin/licenses/${tm.licenseId}/offline-activations`);
    expect(admin.status).toBe(200);
    expect(admin.body.data.items).toEqual([d.activation]);

    // Audit row naming the user, event with source portal.
    const audit = await t.exec<{ actor_type: string; actor_id: string }>("SELECT actor_type, actor_id FROM audit_log WHERE action = 'license.offline_activation.create' AND entity_id = $1", [tm.licenseId]);
    expect(audit).toHaveLength(1);
    expect(audit[0]!.actor_type).toBe("session");
    expect(d.activation.created_by).toBe(audit[0]!.actor_id);
    const events = (await t.exec<{ payload: unknown }>("SELECT payload FROM outbox WHERE topic = 'offline_token.issued'"))
      .map((r) => (typeof r.payload === "string" ? JSON.parse(r.payload) : r.payload) as { data: Record<string, unknown> })
      .filter((e) => e.data.license_id === tm.licenseId);
    expect(events.map((e) => [e.data.source, e.data.actor_type, e.data.fingerprint])).toEqual([["portal", "session", d.fingerprint]]);
  });

  test("one per license: a second is 409 CONFLICT; members and strangers get 404; an admin clear allows a new one", async () => {
    const tm = await team(t);
    expect((await activate(tm.member.cookie, tm.key, "M-1")).status).toBe(404);
    const stranger = await signIn(t, uniqueEmail("stranger"));
    expect((await activate(stranger, tm.key, "S-1")).status).toBe(404);
    expect((await view(stranger, tm.key)).status).toBe(404);
    const first = await activate(tm.admin.cookie, tm.key, "BOX-A");
    expect(first.status).toBe(200);
    const second = await activate(tm.owner.cookie, tm.key, "BOX-B");
    expect(second.status).toBe(409);
    expect(second.body.error).toMatchObject({ code: "CONFLICT", details: { offline_activation_id: first.body.data.activation.id } });

    const cleared = await t.request("DELETE", `/api/v1/admin/licenses/${tm.licenseId}/offline-activations/${first.body.data.activation.id}`);
    expect(cleared.status).toBe(200);
    expect(cleared.body.data.cleared_at).toBe(t.clock.now().toISOString());
    expect(cleared.body.data.cleared_by).toEqual(expect.any(String));
    // Clearing twice: 404.
    expect((await t.request("DELETE", `/api/v1/admin/licenses/${tm.licenseId}/offline-activations/${first.body.data.activation.id}`)).status).toBe(404);
    // jsonb on PostgreSQL, JSON text on SQLite.
    const payloadText = t.engine === "postgres" ? "payload::text" : "payload";
    const events = await t.exec<{ topic: string }>(`SELECT topic FROM outbox WHERE topic = 'offline_activation.cleared' AND ${payloadText} LIKE $1`, [`%${tm.licenseId}%`]);
    expect(events).toHaveLength(1);

    expect((await view(tm.owner.cookie, tm.key)).body.data).toMatchObject({ available: true, activation: null });
    const again = await activate(tm.owner.cookie, tm.key, "BOX-B");
    expect(again.status).toBe(200);
    const list = (await t.request("GET", `/api/v1/admin/licenses/${tm.licenseId}/offline-activations`)).body.data.items;
    expect(list.map((a: { identifier: string; cleared_at: string | null }) => [a.identifier, a.cleared_at !== null])).toEqual([
      ["BOX-B", false],
      ["BOX-A", true],
    ]);
  });

  test("hidden for a floating plan (offered false; activate 403); refused for a suspended license (409)", async () => {
    const floating = await team(t, { floating: true });
    expect((await view(floating.owner.cookie, floating.key)).body.data).toEqual({ license_id: floating.licenseId, offered: false, available: false, activation: null });
    const refused = await activate(floating.owner.cookie, floating.key, "F-1");
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe("FORBIDDEN");

    const tm = await team(t);
    await applyLicenseAction(t.deps, SYSTEM_ACTOR, tm.licenseId, "suspend");
    expect((await view(tm.owner.cookie, tm.key)).body.data.available).toBe(false);
    const res = await activate(tm.owner.cookie, tm.key, "S-1");
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe("INVALID_TRANSITION");
  });

  test("a license with an expiry: the token expires with it (valid_until + grace_days)", async () => {
    const tm = await team(t, { graceDays: 2 });
    const validUntil = new Date("2027-03-01T00:00:00.000Z");
    await patchLicense(t, tm.licenseId, { validUntil });
    const res = await activate(tm.owner.cookie, tm.key, "BOUNDED");
    const expected = Date.parse("2027-03-03T00:00:00.000Z");
    expect(decodeToken(res.body.data.token).exp).toBe(expected / 1000);
    expect(res.body.data).toMatchObject({ perpetual: false, expires_at: new Date(expected).toISOString(), activation: { expires_at: new Date(expected).toISOString() } });
  });
});

describe("license file", () => {
  test("every seat downloads a freshly signed token for the live activation's machine, as an attachment", async () => {
    const tm = await team(t);
    const none = await portalPost(t, tm.owner.cookie, "/portal/offline-activation/license-file", { license_key: tm.key });
    expect(none.status).toBe(404);
    const made = await activate(tm.owner.cookie, tm.key, "FILE-BOX");
    await patchLicense(t, tm.licenseId, { supportUntil: new Date("2029-01-01T00:00:00.000Z") });
    const res = await portalPost(t, tm.member.cookie, "/portal/offline-activation/license-file", { license_key: tm.key });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-disposition")).toBe(`attachment; filename="license-${made.body.data.fingerprint}.lic"`);
    expect(res.headers.get("content-type")).toContain("application/octet-stream");
    const token = res.text.trim();
    expect(res.text.endsWith("\n")).toBe(true);
    expect(await signatureValid(token)).toBe(true);
    const claims = decodeToken(token);
    expect(claims.fpr).toBe(fpr("FILE-BOX", tm.productId));
    expect(claims.idn).toBe("FILE-BOX");
    // The renewed support window is in the new copy.
    expect(claims.sup).toBe(Date.parse("2029-01-01T00:00:00.000Z") / 1000);
    const stranger = await signIn(t, uniqueEmail("stranger"));
    expect((await portalPost(t, stranger, "/portal/offline-activation/license-file", { license_key: tm.key })).status).toBe(404);
  });
});

describe("online verify from the offline machine", () => {
  test("verifies while the activation stands; a cleared activation is 404 LICENSE_NOT_FOUND", async () => {
    const tm = await team(t);
    const made = await activate(tm.owner.cookie, tm.key, "LATER-ONLINE");
    const ok = await verify(tm.key, "LATER-ONLINE");
    expect(ok.status).toBe(200);
    expect(decodeToken(ok.body.data.token).fpr).toBe(made.body.data.fingerprint);
    // Another machine is still unknown.
    expect((await verify(tm.key, "OTHER")).status).toBe(404);
    await t.request("DELETE", `/api/v1/admin/licenses/${tm.licenseId}/offline-activations/${made.body.data.activation.id}`);
    const after = await verify(tm.key, "LATER-ONLINE");
    expect(after.status).toBe(404);
    expect(after.body.error.code).toBe("LICENSE_NOT_FOUND");
  });

  for (const how of ["suspended", "revoked", "expired"] as const) {
    test(`a ${how} license: 404 LICENSE_NOT_FOUND`, async () => {
      const tm = await team(t);
      await activate(tm.owner.cookie, tm.key, "GONE");
      expect((await verify(tm.key, "GONE")).status).toBe(200);
      if (how === "expired") await patchLicense(t, tm.licenseId, { validUntil: new Date(t.clock.nowMs() - 30 * 86_400_000) });
      else await applyLicenseAction(t.deps, SYSTEM_ACTOR, tm.licenseId, how === "suspended" ? "suspend" : "revoke");
      const res = await verify(tm.key, "GONE");
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe("LICENSE_NOT_FOUND");
    });
  }

  test("an admin-issued offline token records nothing, so its machine is unknown online", async () => {
    const tm = await team(t);
    expect((await t.request("POST", `/api/v1/admin/licenses/${tm.licenseId}/offline-token`, { body: { identifier: "ADMIN-BOX" } })).status).toBe(200);
    expect((await verify(tm.key, "ADMIN-BOX")).status).toBe(404);
  });
});
