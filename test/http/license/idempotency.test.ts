import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createTestApp, type TestApp } from "../../support/app";
import { catalog, patchLicense, post, quota } from "../../support/license-api";
import { idempotencyKeys } from "../../../src/db/schema";
import { licenseKeyHash } from "../../../src/modules/licenses/service";
import { normalizeLicenseKey } from "../../../src/crypto/license-key";
import { sha256Hex } from "../../../src/crypto/hash";
import { idempotent } from "../../../src/http/idempotency";
import { STALE_CLAIM_MS } from "../../../src/modules/idempotency/service";
import { recordUsage } from "../../../src/modules/usage/service";
import { presentUsage } from "../../../src/modules/usage/present";
import { ok } from "../../../src/http/envelope";
import { beginRequest } from "../../../src/http/request-context";
import { isAppError } from "../../../src/shared/errors";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const idem = (key: string) => ({ "idempotency-key": key });

describe("Idempotency-Key", () => {
  test("a retry replays the stored response byte for byte, with Idempotent-Replayed, and has no second effect", async () => {
    const { key, license } = await catalog(t, {}, [quota("api", 100)]);
    const body = { license_key: key, feature: "api", quantity: 7 };
    const first = await post(t, "/license/usage", body, idem("k-1"));
    expect(first.status).toBe(200);
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    const second = await post(t, "/license/usage", body, { ...idem("k-1"), "x-request-id": "retry-request-0001" });
    expect(second.status).toBe(200);
    expect(second.headers.get("idempotent-replayed")).toBe("true");
    expect(second.headers.get("x-request-id")).toBe("retry-request-0001");
    expect(second.headers.get("content-type")).toContain("application/json");
    expect(second.text).toBe(first.text);
    expect(await t.deps.repos.usage.used(license.id, "api", "2026-11")).toBe(7);
    // Without the header every call is a new report.
    await post(t, "/license/usage", body);
    expect(await t.deps.repos.usage.used(license.id, "api", "2026-11")).toBe(14);
  });

  test("activate: the replay returns the same token, not a new one", async () => {
    const { key } = await catalog(t);
    const body = { license_key: key, identifier: "d1" };
    const a = await post(t, "/license/activate", body, idem("act-1"));
    const b = await post(t, "/license/activate", body, idem("act-1"));
    expect(b.body.data.token).toBe(a.body.data.token);
    expect(b.body.data.status).toBe("activated"); // the original outcome, not already_activated
  });

  test("floating checkout honors the key too", async () => {
    const { key } = await catalog(t, { floating: true, maxActivations: 1 });
    const a = await post(t, "/license/floating/checkout", { license_key: key, identifier: "w" }, idem("fl-1"));
    const b = await post(t, "/license/floating/checkout", { license_key: key, identifier: "w" }, idem("fl-1"));
    expect(b.headers.get("idempotent-replayed")).toBe("true");
    expect(b.text).toBe(a.text);
  });

  test("the same key with a different body is 422 IDEMPOTENCY_KEY_CONFLICT", async () => {
    const { key } = await catalog(t, {}, [quota("api", 100)]);
    await post(t, "/license/usage", { license_key: key, feature: "api", quantity: 1 }, idem("k-2"));
    const res = await post(t, "/license/usage", { license_key: key, feature: "api", quantity: 2 }, idem("k-2"));
    expect(res.status).toBe(422);
    expect(res.body.error.code).toBe("IDEMPOTENCY_KEY_CONFLICT");
    // Body hash is over the raw bytes: the same JSON with other whitespace is a different body.
    const raw = await t.request("POST", "/api/v1/license/usage", {
      body: `{ "license_key": "${key}", "feature": "api", "quantity": 1 }`,
      raw: true,
      headers: idem("k-2"),
      key: null,
    });
    expect(raw.status).toBe(422);
  });

  test("keys are scoped by route and license key", async () => {
    const a = await catalog(t, {}, [quota("api", 100)]);
    const b = await catalog(t, {}, [quota("api", 100)]);
    await post(t, "/license/usage", { license_key: a.key, feature: "api" }, idem("shared"));
    const other = await post(t, "/license/usage", { license_key: b.key, feature: "api" }, idem("shared"));
    expect(other.status).toBe(200);
    expect(other.headers.get("idempotent-replayed")).toBeNull();
    const otherRoute = await post(t, "/license/activate", { license_key: a.key, identifier: "x" }, idem("shared"));
    expect(otherRoute.status).toBe(200);
    expect(otherRoute.headers.get("idempotent-replayed")).toBeNull();
  });

  test("length: 256 characters pass, 257 or empty are 400 INVALID_IDEMPOTENCY_KEY", async () => {
    const { key } = await catalog(t, {}, [quota("api", 100)]);
    const ok = await post(t, "/license/usage", { license_key: key, feature: "api" }, idem("k".repeat(256)));
    expect(ok.status).toBe(200);
    for (const k of ["k".repeat(257), ""]) {
      const res = await post(t, "/license/usage", { license_key: key, feature: "api" }, idem(k));
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe("INVALID_IDEMPOTENCY_KEY");
    }
  });

  test("4xx outcomes are stored and replayed", async () => {
    const { key } = await catalog(t, {}, [quota("api", 1)]);
    await post(t, "/license/usage", { license_key: key, feature: "api" });
    const body = { license_key: key, feature: "api" };
    const refused = await post(t, "/license/usage", body, idem("k-429"));
    expect(refused.status).toBe(429);
    const again = await post(t, "/license/usage", body, idem("k-429"));
    expect(again.status).toBe(429);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.text).toBe(refused.text);
  });

  test("a 5xx frees the key: the retry runs", async () => {
    const { key, license } = await catalog(t, {}, [quota("api", 100)]);
    const real = t.deps.repos.usage.consume;
    t.deps.repos.usage.consume = () => {
      throw new Error("disk on fire");
    };
    const body = { license_key: key, feature: "api" };
    try {
      const failed = await post(t, "/license/usage", body, idem("k-500"));
      expect(failed.status).toBe(500);
      expect(failed.body.error.code).toBe("INTERNAL_ERROR");
    } finally {
      t.deps.repos.usage.consume = real;
    }
    const retry = await post(t, "/license/usage", body, idem("k-500"));
    expect(retry.status).toBe(200);
    expect(retry.headers.get("idempotent-replayed")).toBeNull();
    expect(await t.deps.repos.usage.used(license.id, "api", "2026-11")).toBe(1);
  });

  const claimOf = async (licenseKey: string, route: string, key: string, rawBody: string) => {
    const scope = { key, route, scope: licenseKeyHash(t.deps, normalizeLicenseKey(licenseKey)) };
    const now = t.clock.now();
    return { scope, result: await t.deps.repos.idempotency.claim(scope, sha256Hex(rawBody), now, new Date(0), new Date(0)) };
  };

  test("while the first request is in flight, the same key gets 409 IDEMPOTENCY_IN_FLIGHT with Retry-After: 1", async () => {
    const { key } = await catalog(t, {}, [quota("api", 100)]);
    const body = { license_key: key, feature: "api" };
    // Another node holds the claim (its request is still running).
    const { result } = await claimOf(key, "license.usage", "k-flight", JSON.stringify(body));
    expect(result.kind).toBe("claimed");
    const res = await post(t, "/license/usage", body, idem("k-flight"));
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe("IDEMPOTENCY_IN_FLIGHT");
    expect(res.headers.get("retry-after")).toBe("1");
    // A claim abandoned by a crashed process is taken over after a minute.
    t.clock.advance(61_000);
    const later = await post(t, "/license/usage", body, idem("k-flight"));
    expect(later.status).toBe(200);
  });

  test("keys expire after 24 hours and are pruned", async () => {
    const { key } = await catalog(t, {}, [quota("api", 100)]);
    await post(t, "/license/usage", { license_key: key, feature: "api", quantity: 1 }, idem("k-day"));
    t.clock.advance(24 * 3600_000 - 1);
    expect((await post(t, "/license/usage", { license_key: key, feature: "api", quantity: 2 }, idem("k-day"))).status).toBe(422);
    t.clock.advance(2);
    const fresh = await post(t, "/license/usage", { license_key: key, feature: "api", quantity: 2 }, idem("k-day"));
    expect(fresh.status).toBe(200);
    expect(fresh.headers.get("idempotent-replayed")).toBeNull();
  });

  test("LOCKED_OUT is transient and not stored", async () => {
    const t2 = await createTestApp({ env: { BF_MAX_FAILS: "1" } });
    try {
      const { key } = await catalog(t2);
      await post(t2, "/license/activate", { license_key: "KW-AAAAAAAA-AAAAAAAA-AAAAAAAA-AAAAAAAA", identifier: "x" }); // locks
      const body = { license_key: key, identifier: "d" };
      expect((await post(t2, "/license/activate", body, idem("k-lock"))).status).toBe(429);
      t2.clock.advance(31_000);
      const after = await post(t2, "/license/activate", body, idem("k-lock"));
      expect(after.status).toBe(200);
      expect(after.headers.get("idempotent-replayed")).toBeNull();
    } finally {
      await t2.close();
    }
  });

  test("stored responses are sealed: no token or key at rest", async () => {
    const { key } = await catalog(t);
    const res = await post(t, "/license/activate", { license_key: key, identifier: "sealed" }, idem("k-seal"));
    const token = res.body.data.token as string;
    const rows = await t.exec("SELECT * FROM idempotency_keys");
    const dump = JSON.stringify(rows);
    expect(rows.length).toBeGreaterThan(0);
    expect(dump).not.toContain(token.split(".")[1]!);
    expect(dump).not.toContain(token.split(".")[0]!.slice(0, 40));
    expect(dump).not.toContain(key);
  });

  // Issue 8 point 5: the outcome is stored inside the effect's transaction. Storing it failing is the
  // in-process stand-in for a crash between the two: the effect must not survive without its outcome.
  test("the outcome commits with the effect: when storing it fails, the effect is undone too", async () => {
    const u = await catalog(t, {}, [quota("api", 100)]);
    const a = await catalog(t);
    const f = await catalog(t, { floating: true, maxActivations: 3 });
    // Sealing the outcome fails inside the effect's transaction (the outcome's key is unavailable).
    const secrets = t.deps.secrets;
    const real = secrets.subkey;
    secrets.subkey = ((name: Parameters<typeof real>[0]) => {
      if (name === "idempotencyResponseEncryption") throw new Error("disk full");
      return real.call(secrets, name);
    }) as typeof real;
    try {
      const usage = await post(t, "/license/usage", { license_key: u.key, feature: "api", quantity: 4 }, idem("k-atomic-u"));
      const activate = await post(t, "/license/activate", { license_key: a.key, identifier: "d" }, idem("k-atomic-a"));
      const floating = await post(t, "/license/floating/checkout", { license_key: f.key, identifier: "w" }, idem("k-atomic-f"));
      expect([usage.status, activate.status, floating.status]).toEqual([500, 500, 500]);
    } finally {
      secrets.subkey = real;
    }
    expect(await t.deps.repos.usage.used(u.license.id, "api", "2026-11")).toBe(0);
    expect(await t.deps.repos.activations.listByLicense(a.license.id)).toHaveLength(0);
    expect(await t.deps.repos.floating.listActive(f.license.id, t.clock.now())).toHaveLength(0);
    // The claims were freed: the retries run, once.
    const retry = await post(t, "/license/usage", { license_key: u.key, feature: "api", quantity: 4 }, idem("k-atomic-u"));
    expect(retry.status).toBe(200);
    expect(retry.headers.get("idempotent-replayed")).toBeNull();
    expect(await t.deps.repos.usage.used(u.license.id, "api", "2026-11")).toBe(4);
  });

  test("a stale-claim takeover cannot apply the effect twice: the late original is rolled back with 409", async () => {
    const { key, license } = await catalog(t, {}, [quota("api", 100)]);
    const body = { license_key: key, feature: "api", quantity: 2 };
    const input = { licenseKey: key, feature: "api", quantity: 2, metadata: undefined };
    const request = () => {
      const r = new Request("http://localhost/api/v1/license/usage", { method: "POST", headers: idem("k-stale") });
      beginRequest(r, "203.0.113.1", 0).rawBody = JSON.stringify(body);
      return r;
    };
    const present = (v: Awaited<ReturnType<typeof recordUsage>>) => ok(presentUsage(v));
    let thrown: unknown = null;
    try {
      await idempotent(t.deps, request(), "license.usage", key, async (record) => {
        // The original stalls past STALE_CLAIM_MS after claiming; meanwhile a retry takes the claim
        // over and completes (usage 2)...
        t.clock.advance(STALE_CLAIM_MS + 1_000);
        const takeover = await idempotent(t.deps, request(), "license.usage", key, (r) => recordUsage(t.deps, input, r), present);
        expect(takeover).not.toBeInstanceOf(Response);
        // ...then the original reaches its effect.
        return recordUsage(t.deps, input, record);
      }, present);
    } catch (e) {
      thrown = e;
    }
    expect(isAppError(thrown) && thrown.code).toBe("IDEMPOTENCY_IN_FLIGHT");
    expect(await t.deps.repos.usage.used(license.id, "api", "2026-11")).toBe(2);
    // The taker's outcome is the one every retry gets.
    const retry = await post(t, "/license/usage", body, idem("k-stale"));
    expect(retry.headers.get("idempotent-replayed")).toBe("true");
    expect(retry.body.data.used).toBe(2);
  });
});

// Issue 8 point 6: a junk license key with a fresh Idempotency-Key used to store a sealed 404 for 24 h
// (~4 KB per request). The collapsed 404 is no longer stored, whatever its cause, so nothing is left.
describe("Idempotency-Key with a license key that resolves to nothing", () => {
  test("leaves no row behind, on every idempotent route, and still answers the one collapsed 404", async () => {
    const u = await createTestApp({ env: { BF_MAX_FAILS: "1000" } });
    try {
      const revoked = await catalog(u, {}, [quota("api", 100)]);
      await patchLicense(u, revoked.license.id, { status: "revoked" });
      const junk = [
        "KW-AAAAAAAA-AAAAAAAA-AAAAAAAA-AAAAAAAA", // well formed, unknown
        "not a key at all",
        revoked.key, // exists, unusable: the same collapsed answer (spec: design rule 4)
      ];
      const routes: [string, (k: string) => Record<string, unknown>][] = [
        ["/license/usage", (k) => ({ license_key: k, feature: "api" })],
        ["/license/floating/checkout", (k) => ({ license_key: k, identifier: "w" })],
        ["/license/verify", (k) => ({ license_key: k, identifier: "w" })], // reference: the collapsed 404 body
      ];
      const reference = (await post(u, "/license/verify", { license_key: junk[0], identifier: "w" })).text;
      let n = 0;
      for (const [path, body] of routes.slice(0, 2)) {
        for (const k of junk) {
          for (let i = 0; i < 5; i++) {
            const res = await post(u, path, body(k), idem(`junk-${n++}`));
            expect(res.status).toBe(404);
            expect(res.text).toBe(reference);
            expect(res.headers.get("idempotent-replayed")).toBeNull();
          }
        }
      }
      // Activate: unknown and malformed keys are 404 too (a revoked key is activate's 403, stored).
      for (const k of junk.slice(0, 2)) {
        for (let i = 0; i < 5; i++) expect((await post(u, "/license/activate", { license_key: k, identifier: "d" }, idem(`junk-${n++}`))).status).toBe(404);
      }
      expect(await u.exec("SELECT * FROM idempotency_keys")).toEqual([]);

      // A retry with the same key simply runs again and gets the same 404 (not a replay).
      const again = await post(u, "/license/usage", routes[0]![1](junk[0]!), idem("junk-0"));
      expect(again.status).toBe(404);
      expect(again.text).toBe(reference);
      expect(again.headers.get("idempotent-replayed")).toBeNull();
      expect(await u.exec("SELECT * FROM idempotency_keys")).toEqual([]);
    } finally {
      await u.close();
    }
  }, 30_000); // ~50 requests and a fresh app: generous for a loaded machine
});
