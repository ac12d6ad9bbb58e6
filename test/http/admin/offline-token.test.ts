// POST /admin/licenses/{id}/offline-token (spec: Offline token issue; docs/admin-api.md "Offline
// tokens"). Runs on both engines (KEYWARD_TEST_ENGINE=postgres for the PostgreSQL pass).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash, createPublicKey, verify as nodeVerify } from "node:crypto";
import { createTestApp, type TestApp } from "../../support/app";
import { catalog, decodeToken, feature, patchLicense, post } from "../../support/license-api";
import { makeProduct } from "../../support/factories";
import { SYSTEM_ACTOR } from "../../../src/shared/actor";
import { applyLicenseAction } from "../../../src/modules/licenses/service";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp(); // clock: 2026-11-21T08:00:00Z
});
afterAll(() => t.close());

const SPKI_PREFIX = Buffer.from("302a300506032b6570032100", "hex");
const path = (id: string) => `/api/v1/admin/licenses/${id}/offline-token`;
const issue = (id: string, body: unknown, key?: string) => t.request("POST", path(id), { body, ...(key ? { key } : {}) });
const nowSeconds = () => Math.floor(t.clock.nowMs() / 1000);

/** The client-side check of docs/integration.md: signature against /license/pubkey, then fpr. */
async function clientAccepts(token: string, identifier: string, productId: string): Promise<boolean> {
  const pub = (await t.request("GET", "/api/v1/license/pubkey", { key: null })).body.data.public_key as string;
  const keyObject = createPublicKey({ key: Buffer.concat([SPKI_PREFIX, Buffer.from(pub, "hex")]), format: "der", type: "spki" });
  const [payload, sig] = token.split(".") as [string, string];
  if (!nodeVerify(null, Buffer.from(payload, "ascii"), keyObject, Buffer.from(sig, "base64url"))) return false;
  const claims = JSON.parse(Buffer.from(payload, "base64url").toString("utf8"));
  const fpr = createHash("sha256").update(`${identifier}:${productId}`).digest("hex").slice(0, 16);
  return claims.fpr === fpr && (claims.exp === 0 || claims.exp > nowSeconds());
}

async function activationCount(licenseId: string): Promise<number> {
  return (await t.deps.repos.activations.listByLicense(licenseId)).length;
}

interface Row {
  topic: string;
  payload: { type: string; timestamp: string; data: Record<string, unknown> };
}
async function offlineEvents(licenseId: string): Promise<Row[]> {
  const rows = await t.exec<{ topic: string; payload: unknown }>("SELECT topic, payload FROM outbox WHERE kind = 'event' AND topic = 'offline_token.issued'");
  return rows
    .map((r) => ({ topic: r.topic, payload: (typeof r.payload === "string" ? JSON.parse(r.payload) : r.payload) as Row["payload"] }))
    .filter((r) => r.payload.data.license_id === licenseId);
}
async function offlineAudit(licenseId: string) {
  const rows = await t.exec<{ actor_type: string; actor_id: string | null; changes: unknown }>(
    "SELECT actor_type, actor_id, changes FROM audit_log WHERE action = 'license.offline_token.issue' AND entity_id = $1",
    [licenseId],
  );
  return rows.map((r) => ({ ...r, changes: (typeof r.changes === "string" ? JSON.parse(r.changes) : r.changes) as any }));
}

describe("issuing", () => {
  test("perpetual: exp = 0, fingerprint = fpr = the formula, verifies against /license/pubkey, no activation", async () => {
    const { product, plan, license, key } = await catalog(t, { maxActivations: 1, graceDays: 2 }, [feature("export")]);
    // One online activation fills the only slot: offline tokens do not count against max_activations.
    expect((await post(t, "/license/activate", { license_key: key, identifier: "online-1" })).status).toBe(200);
    const res = await issue(license.id, { identifier: "MACHINE-CODE-42" });
    expect(res.status).toBe(200);
    expect(res.body.success).toBe(true);
    const data = res.body.data;
    expect(Object.keys(data).sort()).toEqual(["expires_at", "fingerprint", "perpetual", "token"]);
    const expected = createHash("sha256").update(`MACHINE-CODE-42:${product.id}`).digest("hex").slice(0, 16);
    expect(data.fingerprint).toBe(expected);
    expect(data.perpetual).toBe(true);
    expect(data.expires_at).toBe("");
    const claims = decodeToken(data.token);
    expect(claims.exp).toBe(0);
    expect(claims.fpr).toBe(expected);
    expect(claims.idn).toBe("MACHINE-CODE-42");
    expect(claims.lid).toBe(license.id);
    expect(claims.pid).toBe(product.id);
    expect(claims.pln).toBe(plan.id);
    expect(claims.sts).toBe("active");
    expect(claims.grc).toBe(2);
    expect(claims.sup).toBe(0);
    expect(claims.ftr).toEqual({ export: true });
    expect(claims.iat).toBe(nowSeconds());
    expect(claims.kid).toBe(t.deps.tokenKeys.active().kid);
    expect(await clientAccepts(data.token, "MACHINE-CODE-42", product.id)).toBe(true);
    // Bound to the machine: another identifier's recomputed fingerprint does not match.
    expect(await clientAccepts(data.token, "MACHINE-CODE-43", product.id)).toBe(false);
    // Rule 5: no activation recorded; the online one is still the only one.
    expect(await activationCount(license.id)).toBe(1);
    // The token does not make the machine an online activation either.
    expect((await post(t, "/license/verify", { license_key: key, identifier: "MACHINE-CODE-42" })).status).toBe(404);
  });

  test("bounded: exp equals expires_at, sup carries the support window", async () => {
    const { product, license } = await catalog(t);
    const supportUntil = new Date("2028-03-01T00:00:00.000Z");
    await patchLicense(t, license.id, { supportUntil });
    const before = await activationCount(license.id);
    const res = await issue(license.id, { identifier: "air-gapped-7", expires_at: "2027-06-30T12:00:00Z" });
    expect(res.status).toBe(200);
    const claims = decodeToken(res.body.data.token);
    expect(claims.exp).toBe(Date.parse("2027-06-30T12:00:00Z") / 1000);
    expect(res.body.data.perpetual).toBe(false);
    expect(res.body.data.expires_at).toBe("2027-06-30T12:00:00.000Z");
    expect(claims.sup).toBe(supportUntil.getTime() / 1000);
    expect(res.body.data.fingerprint).toBe(claims.fpr);
    expect(await clientAccepts(res.body.data.token, "air-gapped-7", product.id)).toBe(true);
    expect(await activationCount(license.id)).toBe(before);
    // An offset is honoured; sub-second parts are dropped (exp is in whole seconds, and so is the answer).
    const offset = await issue(license.id, { identifier: "air-gapped-7", expires_at: "2027-06-30T14:00:00.750+02:00" });
    expect(decodeToken(offset.body.data.token).exp).toBe(Date.parse("2027-06-30T12:00:00Z") / 1000);
    expect(offset.body.data.expires_at).toBe("2027-06-30T12:00:00.000Z");
    // An empty expires_at is perpetual, like an omitted one.
    const empty = await issue(license.id, { identifier: "air-gapped-7", expires_at: "" });
    expect(empty.status).toBe(200);
    expect(decodeToken(empty.body.data.token).exp).toBe(0);
    expect(empty.body.data).toMatchObject({ perpetual: true, expires_at: "" });
  });

  test("a trialing license gets one", async () => {
    const { license } = await catalog(t, { licenseType: "trial", trialDays: 14 });
    expect(license.status).toBe("trialing");
    const res = await issue(license.id, { identifier: "trial-box" });
    expect(res.status).toBe(200);
    expect(decodeToken(res.body.data.token).sts).toBe("trialing");
  });

  test("signed by the active key: after a rotation the new kid, and the new /license/pubkey verifies it", async () => {
    const { product, license } = await catalog(t);
    const oldKid = t.deps.tokenKeys.active().kid;
    expect((await t.request("POST", "/api/v1/admin/signing-keys/rotate")).status).toBeLessThan(300);
    const res = await issue(license.id, { identifier: "after-rotation" });
    const claims = decodeToken(res.body.data.token);
    expect(claims.kid).not.toBe(oldKid);
    expect(claims.kid).toBe(t.deps.tokenKeys.active().kid);
    expect(await clientAccepts(res.body.data.token, "after-rotation", product.id)).toBe(true);
  });
});

describe("audit and event", () => {
  test("one audit row and one offline_token.issued event naming who issued it; the token is in neither", async () => {
    const { product, plan, license } = await catalog(t);
    const writer = await t.apiKey(["licenses:write"], product.id);
    const res = await issue(license.id, { identifier: "audited-box", expires_at: "2027-01-01T00:00:00Z" }, writer);
    expect(res.status).toBe(200);
    const audit = await offlineAudit(license.id);
    expect(audit).toHaveLength(1);
    expect(audit[0]!.actor_type).toBe("api_key");
    expect(audit[0]!.actor_id).toEqual(expect.any(String));
    expect(audit[0]!.changes.after).toMatchObject({
      identifier: "audited-box",
      fingerprint: res.body.data.fingerprint,
      perpetual: false,
      expires_at: "2027-01-01T00:00:00.000Z",
    });
    const events = await offlineEvents(license.id);
    expect(events).toHaveLength(1);
    expect(events[0]!.payload).toEqual({
      type: "offline_token.issued",
      timestamp: t.clock.now().toISOString(),
      data: {
        license_id: license.id,
        product_id: product.id,
        plan_id: plan.id,
        identifier: "audited-box",
        fingerprint: res.body.data.fingerprint,
        perpetual: false,
        expires_at: "2027-01-01T00:00:00.000Z",
        kid: t.deps.tokenKeys.active().kid,
        source: "admin",
        actor_type: "api_key",
        actor_id: audit[0]!.actor_id,
      },
    });
    const sig = res.body.data.token.split(".")[1];
    expect(JSON.stringify(audit)).not.toContain(sig);
    expect(JSON.stringify(events)).not.toContain(sig);
  });
});

describe("refusals", () => {
  const refusedStates = ["suspended", "revoked", "expired", "canceled", "past_due"] as const;
  for (const status of refusedStates) {
    test(`a ${status} license: 409 INVALID_TRANSITION, no audit row, no event`, async () => {
      const { license } = await catalog(t);
      if (status === "suspended" || status === "revoked") {
        await applyLicenseAction(t.deps, SYSTEM_ACTOR, license.id, status === "suspended" ? "suspend" : "revoke");
      } else {
        await patchLicense(t, license.id, { status });
      }
      const res = await issue(license.id, { identifier: "box" });
      expect(res.status).toBe(409);
      expect(res.body.error.code).toBe("INVALID_TRANSITION");
      expect(res.body.error.details).toEqual({ status, action: "offline_token" });
      expect(await offlineAudit(license.id)).toEqual([]);
      expect(await offlineEvents(license.id)).toEqual([]);
    });
  }

  test("an active license past valid_until + grace (the lifecycle pass not yet run) is refused as expired", async () => {
    const { license } = await catalog(t, { graceDays: 1 });
    await patchLicense(t, license.id, { validUntil: new Date(t.clock.nowMs() - 2 * 86_400_000) });
    const res = await issue(license.id, { identifier: "box" });
    expect(res.status).toBe(409);
    expect(res.body.error.message).toContain("expired");
    // Inside the grace window it is still issued.
    const { license: inGrace } = await catalog(t, { graceDays: 3 });
    await patchLicense(t, inGrace.id, { validUntil: new Date(t.clock.nowMs() - 86_400_000) });
    expect((await issue(inGrace.id, { identifier: "box" })).status).toBe(200);
  });

  test("unknown license 404; another product's bound key 403", async () => {
    expect((await issue("01a2063c-3e9b-7124-b619-41f22363bb93", { identifier: "box" })).status).toBe(404);
    const { license } = await catalog(t);
    const other = await makeProduct(t.deps);
    const bound = await t.apiKey(["licenses:write"], other.id);
    const res = await issue(license.id, { identifier: "box" }, bound);
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe("PRODUCT_SCOPE_MISMATCH");
  });

  test("validation: 400 VALIDATION_ERROR naming the field, nothing recorded", async () => {
    const { license } = await catalog(t);
    const long = "x".repeat(t.deps.config.identifierMaxLength + 1);
    const cases: [unknown, string][] = [
      [{}, "identifier"],
      [{ identifier: "" }, "identifier"],
      [{ identifier: long }, "identifier"],
      [{ identifier: 42 }, "identifier"],
      [{ identifier: "box", expires_at: "2026-11-21T07:59:59Z" }, "expires_at"], // in the past
      [{ identifier: "box", expires_at: "2026-11-21T08:00:00Z" }, "expires_at"], // now: born expired
      [{ identifier: "box", expires_at: "2027-01-01" }, "expires_at"], // not RFC 3339 date-time
      [{ identifier: "box", expires_at: "2027-01-01T00:00:00" }, "expires_at"], // no time zone
      [{ identifier: "box", expires_at: "2027-02-30T00:00:00Z" }, "expires_at"], // no such day
      [{ identifier: "box", expires_at: null }, "expires_at"],
      [{ identifier: "box", extra: 1 }, "extra"],
    ];
    for (const [body, field] of cases) {
      const res = await issue(license.id, body);
      expect({ body, status: res.status, code: res.body.error?.code }).toEqual({ body, status: 400, code: "VALIDATION_ERROR" });
      expect(JSON.stringify(res.body.error.details ?? {})).toContain(field);
    }
    expect(await offlineAudit(license.id)).toEqual([]);
    expect(await offlineEvents(license.id)).toEqual([]);
    // The largest allowed identifier is accepted.
    expect((await issue(license.id, { identifier: long.slice(1) })).status).toBe(200);
  });
});
