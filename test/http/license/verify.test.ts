import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import postgres from "postgres";
import { createPublicKey, verify as nodeVerify } from "node:crypto";
import * as ed from "@noble/ed25519";
import { createTestApp, type TestApp } from "../../support/app";
import { attachAddon, catalog, decodeToken, feature, patchLicense, post, quota } from "../../support/license-api";
import { sha256Hex } from "../../../src/crypto/hash";
import { fingerprint } from "../../../src/crypto/fingerprint";
import { outstandingSignatures } from "../../../src/crypto/offload";
import { whileWriterElsewhere } from "../../support/writer-elsewhere";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const SPKI_PREFIX = Buffer.from("302a300506032b6570032100", "hex");

async function activated(planOver = {}, features = [feature("export")]) {
  const c = await catalog(t, planOver, features);
  const res = await post(t, "/license/activate", { license_key: c.key, identifier: "dev-1" });
  expect(res.status).toBe(200);
  return { ...c, activateToken: res.body.data.token as string };
}

describe("POST /license/verify", () => {
  test("returns every spec field and a fresh token", async () => {
    const { license, plan, key, product } = await activated({ graceDays: 3 }, [
      feature("export"),
      feature("beta", { valueType: "bool", value: "false" }),
      // A flag is on whenever present; its value is a label (docs/admin-api.md "Plan features").
      feature("preview", { valueType: "flag", value: "early-access" }),
      feature("seats", { valueType: "int", value: "5" }),
      feature("tier", { valueType: "string", value: "pro" }),
      quota("api", 100),
    ]);
    await attachAddon(t, product.id, license.id, feature("tier", { valueType: "string", value: "enterprise" }));
    await attachAddon(t, product.id, license.id, quota("api", 50));
    const res = await post(t, "/license/verify", { license_key: key, identifier: "dev-1" });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({
      status: "active",
      plan_id: plan.id,
      plan_name: plan.name,
      valid_until: null,
      support_until: null,
      features: { api: "150", beta: false, export: true, preview: true, seats: "5", tier: "enterprise" },
      token: expect.any(String),
      grace_days: 3,
    });
    const claims = decodeToken(res.body.data.token);
    expect(claims.ftr).toEqual(res.body.data.features);
    expect(claims.grc).toBe(3);
  });

  test("external ids, valid_until and support_until appear when set", async () => {
    const { license, key } = await activated();
    const validUntil = new Date("2027-05-01T00:00:00.000Z");
    const supportUntil = new Date("2027-02-01T12:00:00.000Z");
    await patchLicense(t, license.id, { externalCustomerId: "cus_123", externalWorkspaceId: "ws_9", validUntil, supportUntil });
    const res = await post(t, "/license/verify", { license_key: key, identifier: "dev-1" });
    expect(res.body.data).toMatchObject({
      valid_until: "2027-05-01T00:00:00.000Z",
      support_until: "2027-02-01T12:00:00.000Z",
      external_customer_id: "cus_123",
      external_workspace_id: "ws_9",
    });
    const claims = decodeToken(res.body.data.token);
    expect(claims.sup).toBe(supportUntil.getTime() / 1000);
  });

  test("the seven failure classes answer byte-identical bodies", async () => {
    const bodies: string[] = [];
    const statuses: number[] = [];
    const record = async (body: unknown) => {
      const res = await post(t, "/license/verify", body);
      statuses.push(res.status);
      bodies.push(res.text);
    };
    const base = await activated();
    const unknownKey = base.key.slice(0, -4) + (base.key.endsWith("AAAA") ? "BBBB" : "AAAA");
    await record({ license_key: unknownKey, identifier: "dev-1" }); // missing
    const other = await catalog(t);
    await record({ license_key: base.key, identifier: "dev-1", product_id: other.product.id }); // other product
    await record({ license_key: base.key, identifier: "dev-never-activated" }); // wrong identifier
    const suspended = await activated();
    await patchLicense(t, suspended.license.id, { status: "suspended" });
    await record({ license_key: suspended.key, identifier: "dev-1" }); // suspended
    const revoked = await activated();
    await patchLicense(t, revoked.license.id, { status: "revoked" }); // status only: the activation row stays
    await record({ license_key: revoked.key, identifier: "dev-1" }); // revoked
    const expired = await activated();
    await patchLicense(t, expired.license.id, { validUntil: new Date(t.clock.nowMs() - 1000) });
    await record({ license_key: expired.key, identifier: "dev-1" }); // expired (past valid_until + 0 grace)
    await record({ license_key: "KW-short", identifier: "dev-1" }); // malformed
    expect(statuses).toEqual([404, 404, 404, 404, 404, 404, 404]);
    expect(new Set(bodies).size).toBe(1);
    expect(JSON.parse(bodies[0]!)).toEqual({ success: false, error: { code: "LICENSE_NOT_FOUND", message: "License not found.", details: null } });
    // And the same license verifies fine with the right identifier and product.
    expect((await post(t, "/license/verify", { license_key: base.key, identifier: "dev-1", product_id: base.product.id })).status).toBe(200);
  });

  test("status expired and canceled are refused too", async () => {
    for (const status of ["expired", "canceled"] as const) {
      const { license, key } = await activated();
      await patchLicense(t, license.id, { status });
      expect((await post(t, "/license/verify", { license_key: key, identifier: "dev-1" })).status).toBe(404);
    }
  });

  test("after deactivate, verify is 404", async () => {
    const { key } = await activated();
    expect((await post(t, "/license/deactivate", { license_key: key, identifier: "dev-1" })).status).toBe(200);
    expect((await post(t, "/license/verify", { license_key: key, identifier: "dev-1" })).status).toBe(404);
  });

  test("revoke (with its clear-activations hook) makes verify 404", async () => {
    const { license, key } = await activated();
    await patchLicense(t, license.id, { status: "revoked" }, { clearActivations: true });
    expect(await t.deps.repos.activations.listByLicense(license.id)).toEqual([]);
    expect((await post(t, "/license/verify", { license_key: key, identifier: "dev-1" })).status).toBe(404);
  });
});

describe("signed token", () => {
  test("verifies with node:crypto and @noble/ed25519 against /license/pubkey", async () => {
    const { key, activateToken } = await activated();
    const verified = (await post(t, "/license/verify", { license_key: key, identifier: "dev-1" })).body.data.token as string;
    const pub = (await t.request("GET", "/api/v1/license/pubkey")).body.data.public_key as string;
    const pubBytes = Buffer.from(pub, "hex");
    const keyObject = createPublicKey({ key: Buffer.concat([SPKI_PREFIX, pubBytes]), format: "der", type: "spki" });
    for (const token of [activateToken, verified]) {
      const [payload, sig] = token.split(".") as [string, string];
      expect(token).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/); // base64url, no padding
      const message = Buffer.from(payload, "ascii");
      const signature = Buffer.from(sig, "base64url");
      expect(nodeVerify(null, message, keyObject, signature)).toBe(true);
      expect(await ed.verifyAsync(signature, message, pubBytes)).toBe(true);
      // A tampered payload fails.
      const tampered = Buffer.from(payload.slice(0, -2) + (payload.endsWith("AA") ? "BB" : "AA"), "ascii");
      expect(nodeVerify(null, tampered, keyObject, signature)).toBe(false);
      expect(await ed.verifyAsync(signature, tampered, pubBytes)).toBe(false);
    }
  });

  test("a burst of verifies and activations (signed on the thread pool once others wait) all carry valid tokens for their own device", async () => {
    const c = await catalog(t, { maxActivations: null }, [feature("export")]);
    const devices = Array.from({ length: 40 }, (_, i) => `burst-${i}`);
    const activations = await Promise.all(devices.map((identifier) => post(t, "/license/activate", { license_key: c.key, identifier })));
    const verifies = await Promise.all(devices.map((identifier) => post(t, "/license/verify", { license_key: c.key, identifier })));
    expect(outstandingSignatures()).toBe(0);
    const pub = Buffer.from((await t.request("GET", "/api/v1/license/pubkey")).body.data.public_key as string, "hex");
    const keyObject = createPublicKey({ key: Buffer.concat([SPKI_PREFIX, pub]), format: "der", type: "spki" });
    const nonces = new Set<string>();
    for (const [i, res] of [...activations, ...verifies].entries()) {
      expect(res.status).toBe(200);
      const token = res.body.data.token as string;
      const [payload, sig] = token.split(".") as [string, string];
      expect(nodeVerify(null, Buffer.from(payload, "ascii"), keyObject, Buffer.from(sig, "base64url"))).toBe(true);
      const claims = decodeToken(token);
      expect(claims).toMatchObject({ lid: c.license.id, idn: devices[i % devices.length], ftr: { export: true } });
      nonces.add(claims.nce as string);
    }
    expect(nonces.size).toBe(2 * devices.length);
  });

  test("claims: fpr formula, kid, exp = iat + TOKEN_TTL, fresh nonce per token", async () => {
    const { license, plan, key, activateToken } = await activated();
    const a = decodeToken(activateToken);
    const b = decodeToken((await post(t, "/license/verify", { license_key: key, identifier: "dev-1" })).body.data.token);
    expect(Object.keys(b).sort()).toEqual(["exp", "fpr", "ftr", "grc", "iat", "idn", "kid", "lid", "nce", "pid", "pln", "sts", "sup"]);
    expect(b.fpr).toBe(sha256Hex(`dev-1:${license.productId}`).slice(0, 16));
    expect(b.fpr).toBe(fingerprint("dev-1", license.productId));
    expect(b.kid).toBe(t.deps.tokenKeys.active().kid);
    expect(b.iat).toBe(Math.floor(t.clock.nowMs() / 1000));
    expect(b.exp).toBe(b.iat + t.deps.config.tokenTtlSeconds);
    expect(b.sup).toBe(0);
    expect(b.pln).toBe(plan.id);
    expect(b.lid).toBe(license.id);
    expect(a.nce).not.toBe(b.nce);
  });

  test("exp never passes valid_until + grace_days", async () => {
    const { license, key } = await activated({ graceDays: 2 });
    const validUntil = new Date(t.clock.nowMs() + 86_400_000); // tomorrow; TTL is 7 days
    await patchLicense(t, license.id, { validUntil });
    const claims = decodeToken((await post(t, "/license/verify", { license_key: key, identifier: "dev-1" })).body.data.token);
    expect(claims.exp).toBe(validUntil.getTime() / 1000 + 2 * 86400);
  });

  test("a configured TOKEN_TTL is honored", async () => {
    const t2 = await createTestApp({ env: { TOKEN_TTL: "3600" } });
    try {
      const c = await catalog(t2);
      const res = await post(t2, "/license/activate", { license_key: c.key, identifier: "x" });
      const claims = decodeToken(res.body.data.token);
      expect(claims.exp - claims.iat).toBe(3600);
    } finally {
      await t2.close();
    }
  });

  test("after key rotation tokens carry the new kid and verify against the new key listed in /license/keys", async () => {
    const t2 = await createTestApp();
    try {
      const c = await catalog(t2);
      const first = decodeToken((await post(t2, "/license/activate", { license_key: c.key, identifier: "x" })).body.data.token);
      const rotated = await t2.request("POST", "/api/v1/admin/signing-keys/rotate");
      expect(rotated.status).toBe(200);
      const token = (await post(t2, "/license/verify", { license_key: c.key, identifier: "x" })).body.data.token as string;
      const claims = decodeToken(token);
      expect(claims.kid).toBe(rotated.body.data.kid);
      expect(claims.kid).not.toBe(first.kid);
      const keys = (await t2.request("GET", "/api/v1/license/keys")).body.data.keys as { kid: string; public_key: string }[];
      const k = keys.find((x) => x.kid === claims.kid)!;
      const [payload, sig] = token.split(".") as [string, string];
      expect(await ed.verifyAsync(Buffer.from(sig, "base64url"), Buffer.from(payload), Buffer.from(k.public_key, "hex"))).toBe(true);
    } finally {
      await t2.close();
    }
  });
});

describe("last seen", () => {
  test("is written at most once per LAST_SEEN_INTERVAL_SECONDS per activation", async () => {
    const { license, key } = await activated();
    const seen = async () => (await t.deps.repos.activations.listByLicense(license.id))[0]!.lastSeenAt!.getTime();
    const activatedAt = await seen();
    t.clock.advance(60_000);
    await post(t, "/license/verify", { license_key: key, identifier: "dev-1" });
    expect(await seen()).toBe(activatedAt); // within the interval: no write
    t.clock.advance(t.deps.config.lastSeenIntervalSeconds * 1000);
    await post(t, "/license/verify", { license_key: key, identifier: "dev-1" });
    expect(await seen()).toBe(t.clock.nowMs());
    const written = await seen();
    t.clock.advance(1000);
    await post(t, "/license/verify", { license_key: key, identifier: "dev-1" });
    expect(await seen()).toBe(written);
  });
});

describe("last seen while another writer holds the lock", () => {
  test("a verify due to note last seen answers 200 at once and notes it on a later verify", async () => {
    const { license, key } = await activated();
    const seen = async () => (await t.deps.repos.activations.listByLicense(license.id))[0]!.lastSeenAt!.getTime();
    const activatedAt = await seen();
    t.clock.advance(t.deps.config.lastSeenIntervalSeconds * 1000);
    // Another process (SQLite) or node (PostgreSQL: a transaction holding the activation row) is writing.
    const holder = t.engine === "sqlite" ? null : postgres(t.deps.config.databaseUrl!, { max: 1, onnotice: () => {} });
    try {
      await whileWriterElsewhere(
        holder ? { pg: holder, lockRows: (tx) => tx`SELECT id FROM activations WHERE license_id = ${license.id} FOR UPDATE` } : { sqliteFile: t.sqlite.sqlite.filename },
        async () => {
          const started = Date.now();
          const res = await post(t, "/license/verify", { license_key: key, identifier: "dev-1" });
          expect(res.status).toBe(200);
          expect(Date.now() - started).toBeLessThan(1000);
        },
      );
    } finally {
      await holder?.end();
    }
    expect(await seen()).toBe(activatedAt);
    t.clock.advance(1000);
    expect((await post(t, "/license/verify", { license_key: key, identifier: "dev-1" })).status).toBe(200);
    expect(await seen()).toBe(t.clock.nowMs());
  });
});

describe("POST /license/deactivate", () => {
  test("collapses every failure to the same 404 body", async () => {
    const { key, license } = await activated();
    const bodies = new Set<string>();
    for (const body of [
      { license_key: key, identifier: "not-activated" },
      { license_key: "KW-AAAAAAAA-AAAAAAAA-AAAAAAAA-AAAAAAAA", identifier: "dev-1" },
      { license_key: "junk", identifier: "dev-1" },
      { license_key: key, identifier: "dev-1", product_id: "00000000-0000-4000-8000-000000000000" },
    ]) {
      const res = await post(t, "/license/deactivate", body);
      expect(res.status).toBe(404);
      bodies.add(res.text);
    }
    await patchLicense(t, license.id, { status: "suspended" });
    const suspended = await post(t, "/license/deactivate", { license_key: key, identifier: "dev-1" });
    expect(suspended.status).toBe(404);
    bodies.add(suspended.text);
    expect(bodies.size).toBe(1);
    // The suspended license's activation is untouched.
    expect(await t.deps.repos.activations.listByLicense(license.id)).toHaveLength(1);
  });
});
