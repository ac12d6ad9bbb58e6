import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createPublicKey } from "node:crypto";
import { createTestApp, type TestApp } from "../support/app";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

describe("envelope and HTTP core", () => {
  test("success is enveloped and carries a request id", async () => {
    const res = await t.request("GET", "/api/v1/health");
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, data: { status: "ok", database: "ok" } });
    expect(res.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
  });

  test("unknown route is a 404 in the envelope", async () => {
    const res = await t.request("GET", "/api/v1/does-not-exist");
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ success: false, error: { code: "NOT_FOUND", message: expect.any(String), details: null } });
    expect(res.headers.get("x-request-id")).toBeTruthy();
  });

  test("schema violations are 400 VALIDATION_ERROR with field details", async () => {
    const res = await t.request("POST", "/api/v1/admin/products", { body: { name: "", slug: "Bad Slug" } });
    expect(res.status).toBe(400);
    expect(res.body.success).toBe(false);
    expect(res.body.error.code).toBe("VALIDATION_ERROR");
    expect(Object.keys(res.body.error.details.fields).sort()).toEqual(["name", "slug"]);
  });

  test("malformed JSON is 400 VALIDATION_ERROR", async () => {
    const res = await t.request("POST", "/api/v1/admin/products", { body: '{"name": ', raw: true });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("VALIDATION_ERROR");
    expect(res.body.error.details.fields.body).toBeDefined();
  });

  test("a wrong content type is 400 VALIDATION_ERROR", async () => {
    const res = await t.request("POST", "/api/v1/admin/products", {
      body: "name=x&slug=y",
      raw: true,
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("VALIDATION_ERROR");
  });

  test("an oversized body is 413 PAYLOAD_TOO_LARGE", async () => {
    const res = await t.request("POST", "/api/v1/admin/products", { body: { name: "x".repeat(2 * 1024 * 1024), slug: "big" } });
    expect(res.status).toBe(413);
    expect(res.body.error.code).toBe("PAYLOAD_TOO_LARGE");
  });

  test("an incoming well-formed X-Request-Id is echoed", async () => {
    const res = await t.request("GET", "/api/v1/health", { headers: { "x-request-id": "trace-abc-12345" } });
    expect(res.headers.get("x-request-id")).toBe("trace-abc-12345");
  });

  test("pubkey: the spec's three fields, plus the active key's kid and its SPKI PEM", async () => {
    const res = await t.request("GET", "/api/v1/license/pubkey");
    expect(res.status).toBe(200);
    expect(Object.keys(res.body.data).sort()).toEqual(["algorithm", "format", "kid", "pem", "public_key"]);
    expect(res.body.data.algorithm).toBe("ed25519");
    expect(res.body.data.format).toBe("hex");
    expect(res.body.data.public_key).toMatch(/^[0-9a-f]{64}$/);
    expect(res.body.data.kid).toBe(t.deps.tokenKeys.active().kid);
    // The PEM is the same key: its DER ends with the 32 raw bytes of public_key.
    const pem = res.body.data.pem as string;
    expect(pem).toMatch(/^-----BEGIN PUBLIC KEY-----\n[A-Za-z0-9+/=\n]+-----END PUBLIC KEY-----\n$/);
    const der = createPublicKey(pem).export({ format: "der", type: "spki" });
    expect(der.subarray(-32).toString("hex")).toBe(res.body.data.public_key);
  });

  test("license/keys lists every trusted key with its SPKI PEM", async () => {
    const res = await t.request("GET", "/api/v1/license/keys");
    expect(res.status).toBe(200);
    const keys = res.body.data.keys as { kid: string; public_key: string; pem: string }[];
    expect(keys.length).toBeGreaterThanOrEqual(1);
    for (const k of keys) {
      expect(createPublicKey(k.pem).export({ format: "der", type: "spki" }).subarray(-32).toString("hex")).toBe(k.public_key);
    }
  });
});
