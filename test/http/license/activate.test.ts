import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createTestApp, type TestApp } from "../../support/app";
import { catalog, decodeToken, patchLicense, post } from "../../support/license-api";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

describe("POST /license/activate", () => {
  test("activated consumes a slot; the same identifier again is already_activated and takes none", async () => {
    const { license, key } = await catalog(t, { maxActivations: 2 });
    const first = await post(t, "/license/activate", { license_key: key, identifier: "dev-a", label: "Laptop" });
    expect(first.status).toBe(200);
    expect(Object.keys(first.body.data).sort()).toEqual(["license_id", "status", "token"]);
    expect(first.body.data.status).toBe("activated");
    expect(first.body.data.license_id).toBe(license.id);

    const again = await post(t, "/license/activate", { license_key: key, identifier: "dev-a" });
    expect(again.body.data.status).toBe("already_activated");
    expect((await post(t, "/license/activate", { license_key: key, identifier: "dev-b" })).body.data.status).toBe("activated");

    const full = await post(t, "/license/activate", { license_key: key, identifier: "dev-c" });
    expect(full.status).toBe(409);
    expect(full.body.error.code).toBe("ACTIVATION_LIMIT");
    expect(full.body.error.details).toEqual({ max_activations: 2 });
    expect((await t.deps.repos.activations.listByLicense(license.id)).map((a) => [a.identifier, a.identifierType, a.label])).toEqual([
      ["dev-a", "device", "Laptop"],
      ["dev-b", "device", null],
    ]);
  });

  test("deactivate frees the slot", async () => {
    const { key } = await catalog(t, { maxActivations: 1 });
    expect((await post(t, "/license/activate", { license_key: key, identifier: "one" })).status).toBe(200);
    expect((await post(t, "/license/activate", { license_key: key, identifier: "two" })).status).toBe(409);
    const off = await post(t, "/license/deactivate", { license_key: key, identifier: "one" });
    expect(off.status).toBe(200);
    expect(off.body).toEqual({ success: true, data: { status: "deactivated" } });
    expect((await post(t, "/license/activate", { license_key: key, identifier: "two" })).body.data.status).toBe("activated");
  });

  test("max_activations null is unlimited", async () => {
    const { key } = await catalog(t, { maxActivations: null });
    for (let i = 0; i < 12; i++) expect((await post(t, "/license/activate", { license_key: key, identifier: `d${i}` })).status).toBe(200);
  });

  test("identifier_type user and keys pasted in lower case with spaces", async () => {
    const { license, key } = await catalog(t);
    const res = await post(t, "/license/activate", { license_key: `  ${key.toLowerCase()} `, identifier: "ada@example.com", identifier_type: "user" });
    expect(res.status).toBe(200);
    expect((await t.deps.repos.activations.listByLicense(license.id))[0]!.identifierType).toBe("user");
  });

  test("validation: identifier required, length limit, identifier_type enum", async () => {
    const { key } = await catalog(t);
    const max = t.deps.config.identifierMaxLength;
    const long = await post(t, "/license/activate", { license_key: key, identifier: "x".repeat(max + 1) });
    expect(long.status).toBe(400);
    expect(long.body.error.code).toBe("VALIDATION_ERROR");
    expect(long.body.error.details.fields.identifier).toBeDefined();
    expect((await post(t, "/license/activate", { license_key: key, identifier: "x".repeat(max) })).status).toBe(200);
    expect((await post(t, "/license/activate", { license_key: key })).status).toBe(400);
    expect((await post(t, "/license/activate", { license_key: key, identifier: "" })).status).toBe(400);
    expect((await post(t, "/license/activate", { license_key: key, identifier: "a", identifier_type: "robot" })).status).toBe(400);
    expect((await post(t, "/license/activate", { license_key: key, identifier: "a", product_id: "not-a-uuid" })).status).toBe(400);
  });

  test("403 LICENSE_INACTIVE for expired, suspended, revoked, canceled and past-grace licenses", async () => {
    for (const status of ["expired", "suspended", "revoked", "canceled"] as const) {
      const { license, key } = await catalog(t);
      await patchLicense(t, license.id, { status });
      const res = await post(t, "/license/activate", { license_key: key, identifier: "d" });
      expect(res.status).toBe(403);
      expect(res.body.error.code).toBe("LICENSE_INACTIVE");
    }
    const { license, key } = await catalog(t, { graceDays: 2 });
    const now = t.clock.nowMs();
    await patchLicense(t, license.id, { validUntil: new Date(now - 2 * 86_400_000 - 1) });
    expect((await post(t, "/license/activate", { license_key: key, identifier: "d" })).status).toBe(403);
    await patchLicense(t, license.id, { validUntil: new Date(now - 2 * 86_400_000) }); // last instant of grace: still usable
    expect((await post(t, "/license/activate", { license_key: key, identifier: "d" })).status).toBe(200);
    expect((await post(t, "/license/activate", { license_key: key, identifier: "d2", product_id: license.productId })).status).toBe(200);
  });

  test("past_due and trialing licenses activate", async () => {
    for (const status of ["past_due", "trialing"] as const) {
      const { license, key } = await catalog(t);
      await patchLicense(t, license.id, { status });
      expect((await post(t, "/license/activate", { license_key: key, identifier: "d" })).status).toBe(200);
    }
  });

  test("404 LICENSE_NOT_FOUND for unknown, malformed and other-product keys", async () => {
    const { key } = await catalog(t);
    const other = await catalog(t);
    const unknown = key.slice(0, -1) + (key.endsWith("A") ? "B" : "A");
    for (const body of [
      { license_key: unknown, identifier: "d" },
      { license_key: "not a key", identifier: "d" },
      { license_key: key, identifier: "d", product_id: other.product.id },
    ]) {
      const res = await post(t, "/license/activate", body);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ success: false, error: { code: "LICENSE_NOT_FOUND", message: "License not found.", details: null } });
    }
  });

  test("the token names the license, the identifier and the fingerprint", async () => {
    const { license, plan, key } = await catalog(t);
    const res = await post(t, "/license/activate", { license_key: key, identifier: "machine-7" });
    const claims = decodeToken(res.body.data.token);
    expect(claims.lid).toBe(license.id);
    expect(claims.pid).toBe(license.productId);
    expect(claims.pln).toBe(plan.id);
    expect(claims.idn).toBe("machine-7");
    expect(claims.sts).toBe("active");
  });
});
