// POST /admin/api-keys and /admin/api-keys/{id}/revoke write their audit rows with the change, in
// one unit of work (api-keys/service.ts): one row per create, one per revoke however often it is
// repeated, none for an unknown key. Runs on each engine (the HTTP suite's PostgreSQL pass).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createTestApp, type TestApp } from "../../support/app";

const V1 = "/api/v1";
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

test("a key is created and revoked with one audit row each; a repeated revoke answers the same key and records nothing", async () => {
  const created = await t.request("POST", `${V1}/admin/api-keys`, { body: { name: "CI", scopes: ["releases:write"] } });
  expect(created.status).toBe(201);
  const id = created.body.data.id as string;
  const first = await t.request("POST", `${V1}/admin/api-keys/${id}/revoke`);
  expect(first.status).toBe(200);
  expect(first.body.data.revoked_at).not.toBeNull();
  const again = await t.request("POST", `${V1}/admin/api-keys/${id}/revoke`);
  expect(again.status).toBe(200);
  expect(again.body.data.revoked_at).toBe(first.body.data.revoked_at);
  expect((await t.request("POST", `${V1}/admin/api-keys/00000000-0000-7000-8000-000000000000/revoke`)).status).toBe(404);
  // (The test app's own admin key has its create row too: only this key's rows are read.)
  const rows = await t.exec<{ action: string }>("SELECT action FROM audit_log WHERE entity_id = $1 ORDER BY created_at, id", [id]);
  expect(rows.map((r) => r.action)).toEqual(["api_key.create", "api_key.revoke"]);
  expect(await t.exec("SELECT id FROM audit_log WHERE entity_id = $1", ["00000000-0000-7000-8000-000000000000"])).toEqual([]);
});
