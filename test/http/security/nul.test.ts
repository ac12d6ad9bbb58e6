// U+0000 in a request: PostgreSQL refuses it in text (22021) and jsonb (22P05), where SQLite stores
// it, so the same request was a 500 on one engine and stored on the other (and such a row could not
// be copied to PostgreSQL later). It is refused before any route reads it, on both engines alike:
// in a JSON body (any string or key, at any depth: http/json-limits.ts) and in the URL, decoded into
// a path parameter or a query value (http/url-nul.ts). This file runs in the HTTP suite on each engine.
import { afterAll, describe, expect, test } from "bun:test";
import { createTestApp } from "../../support/app";
import { catalog, post, quota } from "../../support/license-api";

const t = await createTestApp();
afterAll(() => t.close());

const NUL = "a\u0000b";

function refused(res: { status: number; body: any }, field: string) {
  expect({ status: res.status, code: res.body?.error?.code, fields: Object.keys(res.body?.error?.details?.fields ?? {}) }).toEqual({
    status: 400,
    code: "VALIDATION_ERROR",
    fields: [field],
  });
}

describe("U+0000 in a JSON body is 400 VALIDATION_ERROR naming the field, and nothing is stored", () => {
  test("public license routes: identifier, label, usage metadata values and keys", async () => {
    const { key, license } = await catalog(t, {}, [quota("api", 100)]);
    refused(await post(t, "/license/activate", { license_key: key, identifier: NUL }), "identifier");
    refused(await post(t, "/license/activate", { license_key: key, identifier: "dev-1", label: NUL }), "label");
    refused(await post(t, "/license/verify", { license_key: key, identifier: NUL }), "identifier");
    refused(await post(t, "/license/floating/checkout", { license_key: key, identifier: NUL }), "identifier");
    expect(await t.deps.repos.activations.listByLicense(license.id)).toEqual([]);

    refused(await post(t, "/license/usage", { license_key: key, feature: "api", quantity: 1, metadata: { note: NUL } }), "metadata.note");
    refused(await post(t, "/license/usage", { license_key: key, feature: "api", quantity: 1, metadata: { [NUL]: "x" } }), `metadata.${NUL}`);
    expect((await post(t, "/license/usage/status", { license_key: key, feature: "api" })).body.data.used).toBe(0);
  });

  test("admin routes: a plan name", async () => {
    const { product } = await catalog(t);
    const before = (await t.request("GET", `/api/v1/admin/plans?product_id=${product.id}`)).body.data.items.length;
    refused(await t.request("POST", "/api/v1/admin/plans", { body: { product_id: product.id, name: NUL, license_type: "perpetual" } }), "name");
    expect((await t.request("GET", `/api/v1/admin/plans?product_id=${product.id}`)).body.data.items).toHaveLength(before);
  });

  test("other control characters, and an escaped backslash before u0000, are ordinary text", async () => {
    const { key } = await catalog(t);
    const res = await t.request("POST", "/api/v1/license/activate", {
      body: `{"license_key":"${key}","identifier":"dev\\\\u0000\\u0001"}`,
      raw: true,
      key: null,
    });
    expect(res.status).toBe(200);
  });
});

describe("%00 in the URL is 400 VALIDATION_ERROR naming where, before any route reads it", () => {
  test("a query value or name: the parameter, or `query` when its name holds it", async () => {
    refused(await t.request("GET", "/api/v1/admin/licenses?email=a%00b"), "email");
    refused(await t.request("GET", "/api/v1/admin/licenses?limit=5&external_customer_id=a%00b"), "external_customer_id");
    refused(await t.request("GET", "/api/v1/admin/audit?entity_id=a%00b"), "entity_id");
    refused(await t.request("GET", "/api/v1/admin/licenses?a%00b=1"), "query");
  });

  test("a path: `path`", async () => {
    refused(await t.request("GET", "/api/v1/admin/jobs/a%00b"), "path");
    refused(await t.request("GET", "/api/v1/releases/a%00b/upgrade.json", { key: null }), "path");
  });

  test("an encoded percent sign is not U+0000", async () => {
    const res = await t.request("GET", "/api/v1/admin/licenses?email=a%2500b");
    expect(res.status).toBe(200);
    expect(res.body.data.items).toEqual([]);
  });
});
