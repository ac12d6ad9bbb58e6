import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { desc, eq } from "drizzle-orm";
import { createTestApp, type TestApp } from "../../support/app";
import { catalog, feature, patchLicense, post, quota } from "../../support/license-api";
import { usageEvents } from "../../../src/db/schema";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp(); // clock: 2026-11-21T08:00:00Z
});
afterAll(() => t.close());

const events = async (licenseId: string) =>
  (
    await t.exec<{ quantity: number; metadata: unknown; period_key: string }>(
      "SELECT quantity, metadata, period_key FROM usage_events WHERE license_id = $1 ORDER BY created_at DESC, id DESC",
      [licenseId],
    )
  ).map((e) => ({
    quantity: Number(e.quantity),
    // JSON text on SQLite, jsonb (already parsed) on PostgreSQL
    metadata: typeof e.metadata === "string" ? JSON.parse(e.metadata) : e.metadata,
    periodKey: e.period_key,
  }));

describe("POST /license/usage", () => {
  test("counts, reports the period, stores metadata with the event", async () => {
    const { license, key } = await catalog(t, {}, [quota("api", 10)]);
    const first = await post(t, "/license/usage", { license_key: key, feature: "api" });
    expect(first.status).toBe(200);
    expect(first.body.data).toEqual({ accepted: true, used: 1, limit: 10, remaining: 9, period: "monthly", period_key: "2026-11" });
    const second = await post(t, "/license/usage", { license_key: key, feature: "api", quantity: 4, metadata: { job: "build-7", size: 3 } });
    expect(second.body.data).toMatchObject({ used: 5, remaining: 5 });
    const stored = await events(license.id);
    expect(stored.map((e) => [e.quantity, e.metadata, e.periodKey])).toContainEqual([4, { job: "build-7", size: 3 }, "2026-11"]);
    expect(stored.map((e) => [e.quantity, e.metadata])).toContainEqual([1, null]);
  });

  test("a revoke committed between the lookup and the write wins: 404, nothing counted", async () => {
    const { license, key } = await catalog(t, {}, [quota("api", 10)]);
    // Interleave a revoke at the worst moment: after the service's lookup, before its transaction.
    const real = t.deps.repos.usage.consume;
    t.deps.repos.usage.consume = async (input, check) => {
      await patchLicense(t, license.id, { status: "revoked" }, { clearActivations: true });
      return real(input, check);
    };
    try {
      const res = await post(t, "/license/usage", { license_key: key, feature: "api" });
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe("LICENSE_NOT_FOUND");
    } finally {
      t.deps.repos.usage.consume = real;
    }
    expect(await events(license.id)).toEqual([]);
    expect(await t.deps.repos.usage.used(license.id, "api", "2026-11")).toBe(0);
  });

  test("429 QUOTA_EXCEEDED with details when the quantity does not fit; nothing is consumed", async () => {
    const { key } = await catalog(t, {}, [quota("api", 10, "daily")]);
    await post(t, "/license/usage", { license_key: key, feature: "api", quantity: 8 });
    const over = await post(t, "/license/usage", { license_key: key, feature: "api", quantity: 3 });
    expect(over.status).toBe(429);
    expect(over.body.error.code).toBe("QUOTA_EXCEEDED");
    expect(over.body.error.details).toMatchObject({ used: 8, limit: 10, period: "daily" });
    const exact = await post(t, "/license/usage", { license_key: key, feature: "api", quantity: 2 });
    expect(exact.body.data).toMatchObject({ used: 10, remaining: 0, period_key: "2026-11-21" });
    expect((await post(t, "/license/usage", { license_key: key, feature: "api" })).status).toBe(429);
  });

  test("quantity must be an integer >= 1; metadata must be an object of bounded size", async () => {
    const { key } = await catalog(t, {}, [quota("api", 10)]);
    for (const quantity of [0, -1, 1.5, "abc", true, null]) {
      const res = await post(t, "/license/usage", { license_key: key, feature: "api", quantity });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe("VALIDATION_ERROR");
    }
    for (const metadata of [[1], "x", 3, true]) {
      const res = await post(t, "/license/usage", { license_key: key, feature: "api", metadata });
      expect(res.status).toBe(400);
      expect(res.body.error.details.fields.metadata).toBe("must be a JSON object");
    }
    const big = await post(t, "/license/usage", { license_key: key, feature: "api", metadata: { x: "y".repeat(5000) } });
    expect(big.status).toBe(400);
    expect(big.body.error.details.fields.metadata).toBeDefined();
    expect((await post(t, "/license/usage/status", { license_key: key, feature: "api" })).body.data.used).toBe(0);
  });

  test("a feature that is not a quota (or does not exist) is 400 VALIDATION_ERROR", async () => {
    const { key } = await catalog(t, {}, [feature("export"), quota("api", 10)]);
    for (const f of ["export", "nope"]) {
      for (const path of ["/license/usage", "/license/usage/status"]) {
        const res = await post(t, path, { license_key: key, feature: f });
        expect(res.status).toBe(400);
        expect(res.body.error.code).toBe("VALIDATION_ERROR");
        expect(res.body.error.details).toEqual({ fields: { feature: "not a quota feature of this license" } });
      }
    }
  });

  test("unlimited quotas count and never refuse", async () => {
    const { key } = await catalog(t, {}, [quota("events", null)]);
    const res = await post(t, "/license/usage", { license_key: key, feature: "events", quantity: 1_000_000 });
    expect(res.body.data).toEqual({ accepted: true, used: 1_000_000, limit: null, remaining: null, period: "monthly", period_key: "2026-11" });
  });

  test("unknown and unusable keys are the collapsed 404", async () => {
    const { key, license } = await catalog(t, {}, [quota("api", 10)]);
    const reference = (await post(t, "/license/verify", { license_key: "junk", identifier: "x" })).text;
    expect((await post(t, "/license/usage", { license_key: "KW-AAAAAAAA-AAAAAAAA-AAAAAAAA-AAAAAAAA", feature: "api" })).text).toBe(reference);
    await patchLicense(t, license.id, { status: "suspended" });
    for (const path of ["/license/usage", "/license/usage/status"]) {
      const res = await post(t, path, { license_key: key, feature: "api" });
      expect(res.status).toBe(404);
      expect(res.text).toBe(reference);
    }
  });
});

describe("POST /license/usage/status", () => {
  test("reports without consuming", async () => {
    const { key } = await catalog(t, {}, [quota("api", 10, "hourly")]);
    await post(t, "/license/usage", { license_key: key, feature: "api", quantity: 3 });
    for (let i = 0; i < 3; i++) {
      const res = await post(t, "/license/usage/status", { license_key: key, feature: "api" });
      expect(res.body.data).toEqual({ feature: "api", used: 3, limit: 10, remaining: 7, period: "hourly", period_key: "2026-11-21T08" });
    }
  });
});

describe("period rollover at UTC boundaries (injected clock)", () => {
  test("each period starts a fresh counter at its boundary", async () => {
    const t2 = await createTestApp();
    try {
      const { key } = await catalog(t2, {}, [quota("h", 2, "hourly"), quota("d", 2, "daily"), quota("m", 2, "monthly"), quota("y", 2, "yearly")]);
      const use = async (f: string) => (await post(t2, "/license/usage", { license_key: key, feature: f, quantity: 2 })).body;
      t2.clock.set("2026-12-31T23:59:59.999Z");
      for (const f of ["h", "d", "m", "y"]) expect((await use(f)).data.used).toBe(2);
      for (const f of ["h", "d", "m", "y"]) expect((await use(f)).error.code).toBe("QUOTA_EXCEEDED");
      t2.clock.set("2027-01-01T00:00:00.000Z");
      const keys: Record<string, string> = {};
      for (const f of ["h", "d", "m", "y"]) {
        const body = await use(f);
        expect(body.data.used).toBe(2);
        keys[f] = body.data.period_key;
      }
      expect(keys).toEqual({ h: "2027-01-01T00", d: "2027-01-01", m: "2027-01", y: "2027" });
      // An hour later only the hourly quota has reset.
      t2.clock.set("2027-01-01T01:00:00.000Z");
      expect((await use("h")).data.period_key).toBe("2027-01-01T01");
      expect((await use("d")).error.details).toMatchObject({ used: 2, limit: 2, period: "daily" });
    } finally {
      await t2.close();
    }
  });
});
