import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash, createPublicKey, randomBytes, verify } from "node:crypto";
import { createTestApp, type TestApp } from "../../support/app";
import { makeProduct } from "../../support/factories";
import { minisignVerify } from "../../support/minisign-cli";
import { toolTest } from "../../support/tools";
import { signArtifact } from "../../../src/modules/release-keys/service";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const keysPath = (id: string) => `/api/v1/admin/products/${id}/signing-keys`;

function streamOf(data: Uint8Array) {
  return async () => new Blob([data]).stream();
}

async function signWithProductKey(productId: string, data: Uint8Array, version = "1.0.0") {
  return await signArtifact(t.deps, productId, {
    open: streamOf(data),
    blake2b512: new Uint8Array(createHash("blake2b512").update(data).digest()),
    filename: "App-1.0.0.zip",
    version,
    timestamp: 1_800_000_000,
  });
}

describe("GET /admin/products/:id/signing-keys", () => {
  test("generates the first key on demand and exports every public form", async () => {
    const p = await makeProduct(t.deps);
    const res = await t.request("GET", keysPath(p.id));
    expect(res.status).toBe(200);
    const [k, ...rest] = res.body.data.items;
    expect(rest).toHaveLength(0);
    expect(k.active).toBe(true);
    expect(k.retired_at).toBeNull();
    expect(k.kid).toMatch(/^[0-9a-f]{16}$/);

    // Sparkle: base64 of exactly 32 raw bytes, and it verifies a signature made by the service.
    const raw = Buffer.from(k.sparkle_public_key, "base64");
    expect(raw).toHaveLength(32);
    expect(raw.toString("base64")).toBe(k.sparkle_public_key);
    const data = new Uint8Array(randomBytes(10_000));
    const sig = await signWithProductKey(p.id, data);
    expect(sig.kid).toBe(k.kid);
    const spki = createPublicKey({ key: Buffer.concat([Buffer.from("302a300506032b6570032100", "hex"), raw]), format: "der", type: "spki" });
    expect(await verify(null, data, spki, Buffer.from(sig.edSignature, "base64"))).toBe(true);

    // PEM: the same key through node:crypto's PEM parser.
    expect(await verify(null, data, createPublicKey(k.pem), Buffer.from(sig.edSignature, "base64"))).toBe(true);

    // minisign: key file text; Tauri: base64 of exactly that text.
    expect(k.minisign_public_key).toMatch(/^untrusted comment: minisign public key [0-9A-F]{16}\nRW[QRST][A-Za-z0-9+/]{53}\n$/);
    expect(k.minisign_public_key).toContain(k.minisign_key_id);
    expect(Buffer.from(k.tauri_public_key, "base64").toString("utf8")).toBe(k.minisign_public_key);
    const struct = Buffer.from(k.minisign_public_key.split("\n")[1], "base64");
    expect(struct.subarray(10).equals(raw)).toBe(true);

    // Asking again does not create another key.
    const again = await t.request("GET", keysPath(p.id));
    expect(again.body.data.items.map((x: any) => x.kid)).toEqual([k.kid]);
  });

  toolTest("minisign")("the exported minisign public key verifies the artifact signature with `minisign -V`", async () => {
    const p = await makeProduct(t.deps);
    const k = (await t.request("GET", keysPath(p.id))).body.data.items[0];
    const data = new Uint8Array(randomBytes(300_000));
    const sig = await signWithProductKey(p.id, data, "2.1.0");
    expect(sig.minisign.split("\n")[2]).toBe("trusted comment: timestamp:1800000000\tfile:App-1.0.0.zip\tversion:2.1.0");
    const ok = await minisignVerify({ publicKeyFile: k.minisign_public_key, message: data, signatureFile: sig.minisign });
    expect(ok.output).toContain("Signature and comment signature verified");
    expect(ok.ok).toBe(true);
    const tampered = data.slice();
    tampered[0] = tampered[0]! ^ 0xff;
    expect((await minisignVerify({ publicKeyFile: k.minisign_public_key, message: tampered, signatureFile: sig.minisign })).ok).toBe(false);
  });

  test("a product-bound key sees only its own product's keys; unknown product is 404", async () => {
    const mine = await makeProduct(t.deps);
    const other = await makeProduct(t.deps);
    const key = await t.apiKey(["releases:write"], mine.id);
    expect((await t.request("GET", keysPath(mine.id), { key })).status).toBe(200);
    const denied = await t.request("GET", keysPath(other.id), { key });
    expect(denied.status).toBe(403);
    expect(denied.body.error.code).toBe("PRODUCT_SCOPE_MISMATCH");
    const missing = await t.request("GET", keysPath("00000000-0000-7000-8000-000000000000"));
    expect(missing.status).toBe(404);
  });

  test("licenses:write cannot read release keys", async () => {
    const p = await makeProduct(t.deps);
    const res = await t.request("GET", keysPath(p.id), { key: await t.apiKey(["licenses:write"]) });
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe("INSUFFICIENT_SCOPE");
  });
});

describe("POST /admin/products/:id/signing-keys/rotate", () => {
  test("activates a new key, keeps the old one listed as retired, and signs with the new one", async () => {
    const p = await makeProduct(t.deps);
    const first = (await t.request("GET", keysPath(p.id))).body.data.items[0];
    t.clock.advance(60_000);
    const rotated = await t.request("POST", `${keysPath(p.id)}/rotate`);
    expect(rotated.status).toBe(200);
    const second = rotated.body.data;
    expect(second.kid).not.toBe(first.kid);
    expect(second.active).toBe(true);
    expect(second.minisign_key_id).not.toBe(first.minisign_key_id);

    const list = (await t.request("GET", keysPath(p.id))).body.data.items;
    expect(list.map((k: any) => [k.kid, k.active])).toEqual([
      [second.kid, true],
      [first.kid, false],
    ]);
    expect(list[1].retired_at).toBe(t.clock.now().toISOString());
    // Old public forms are unchanged, so apps shipping the old key can still be identified.
    expect(list[1].sparkle_public_key).toBe(first.sparkle_public_key);

    const sig = await signWithProductKey(p.id, new Uint8Array([1, 2, 3]));
    expect(sig.kid).toBe(second.kid);

    const audit = (await t.deps.repos.audit.list({ action: "release_signing_key.rotate", productId: p.id, limit: 10 })).items;
    expect(audit).toHaveLength(1);
    expect(audit[0]!.entityId).toBe(second.kid);
    expect(audit[0]!.changes).toEqual({ previous_kid: first.kid });
  });

  test("is admin-only: a releases:write key gets 403 INSUFFICIENT_SCOPE", async () => {
    const p = await makeProduct(t.deps);
    const res = await t.request("POST", `${keysPath(p.id)}/rotate`, { key: await t.apiKey(["releases:write"]) });
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe("INSUFFICIENT_SCOPE");
  });
});

describe("signArtifact", () => {
  test("refuses (409 CONFLICT) when the stored bytes no longer match the finalize digest", async () => {
    const p = await makeProduct(t.deps);
    const data = new Uint8Array(randomBytes(1000));
    const stale = new Uint8Array(createHash("blake2b512").update("something else").digest());
    const err = await signArtifact(t.deps, p.id, { open: streamOf(data), blake2b512: stale, filename: "a.zip", version: "1.0.0", timestamp: 1 }).catch(
      (e) => e,
    );
    expect(err.code).toBe("CONFLICT");
  });

  test("refuses a filename that cannot go into the trusted comment (400)", async () => {
    const p = await makeProduct(t.deps);
    const data = new Uint8Array(8);
    const blake = new Uint8Array(createHash("blake2b512").update(data).digest());
    const err = await signArtifact(t.deps, p.id, { open: streamOf(data), blake2b512: blake, filename: "a\tb.zip", version: "1.0.0", timestamp: 1 }).catch(
      (e) => e,
    );
    expect(err.code).toBe("VALIDATION_ERROR");
  });
});

describe("at rest", () => {
  test("the database holds no release private key in plaintext, and the sealed seed is bound to its row", async () => {
    const p = await makeProduct(t.deps);
    const data = new Uint8Array(randomBytes(64));
    await signWithProductKey(p.id, data);
    const record = (await t.deps.repos.signingKeys.findActive("release", p.id))!;
    expect(record.keyNumHex).toMatch(/^[0-9a-f]{16}$/);
    const { openSeed } = await import("../../../src/modules/keys/service");
    const seed = Buffer.from(openSeed(t.deps.secrets, record));
    expect(seed).toHaveLength(32);

    // The stored row, on either engine, holds the seed in no common encoding.
    const rows = await t.exec("SELECT * FROM signing_keys WHERE product_id = $1", [p.id]);
    expect(rows).toHaveLength(1);
    const dump = JSON.stringify(rows);
    for (const enc of ["hex", "base64", "base64url"] as const) expect(dump).not.toContain(seed.toString(enc));
    // On SQLite, scan the whole database file (and WAL) too.
    const files = t.engine === "sqlite" ? [t.deps.config.databasePath, `${t.deps.config.databasePath}-wal`] : [];
    for (const f of files) {
      const file = Bun.file(f);
      if (!(await file.exists())) continue;
      const bytes = Buffer.from(await file.arrayBuffer());
      expect(bytes.indexOf(seed)).toBe(-1);
      expect(bytes.indexOf(Buffer.from(seed.toString("hex")))).toBe(-1);
    }

    // The ciphertext is bound to its row id (AAD): moved to another row it does not open.
    expect(() => openSeed(t.deps.secrets, { ...record, id: "another-row" })).toThrow();
  });
});
