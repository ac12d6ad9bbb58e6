// Guards DECISIONS: Idempotency — the in-flight claim is one atomic INSERT on the scope's primary
// key, so parallel requests with one Idempotency-Key produce exactly one effect.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createTestApp, type TestApp } from "../support/app";
import { catalog, quota } from "../support/license-api";
import type { RunningServer } from "../../src/server";
import { all, postJson } from "./support";

let t: TestApp;
let s: RunningServer;
beforeAll(async () => {
  t = await createTestApp();
  s = t.listen();
});
afterAll(() => t.close());

test("20 parallel usage reports with one key → one effect; the rest replay or are told it is in flight", async () => {
  const { key, license } = await catalog(t, {}, [quota("api", 1000)]);
  const body = { license_key: key, feature: "api", quantity: 5 };
  const results = await all(20, () => postJson(s.url, "/license/usage", body, { "idempotency-key": "race-1" }));
  const fresh = results.filter((r) => r.status === 200 && r.headers.get("idempotent-replayed") === null);
  const replayed = results.filter((r) => r.status === 200 && r.headers.get("idempotent-replayed") === "true");
  const inFlight = results.filter((r) => r.status === 409);
  expect(fresh).toHaveLength(1);
  expect(replayed.length + inFlight.length).toBe(19);
  for (const r of replayed) expect(r.body).toEqual(fresh[0]!.body);
  for (const r of inFlight) {
    expect(r.body.error.code).toBe("IDEMPOTENCY_IN_FLIGHT");
    expect(r.headers.get("retry-after")).toBe("1");
  }
  expect(await t.deps.repos.usage.used(license.id, "api", "2026-11")).toBe(5);

  const conflict = await postJson(s.url, "/license/usage", { ...body, quantity: 6 }, { "idempotency-key": "race-1" });
  expect(conflict.status).toBe(422);
  expect(conflict.body.error.code).toBe("IDEMPOTENCY_KEY_CONFLICT");
});

test("20 parallel activations with one key → one activation, one token", async () => {
  const { key, license } = await catalog(t, { maxActivations: 1 });
  const results = await all(20, () => postJson(s.url, "/license/activate", { license_key: key, identifier: "pc" }, { "idempotency-key": "race-act" }));
  expect(results.every((r) => r.status === 200 || r.status === 409)).toBe(true);
  const tokens = new Set(results.filter((r) => r.status === 200).map((r) => r.body.data.token));
  expect(tokens.size).toBe(1);
  expect(results.filter((r) => r.status === 200 && r.headers.get("idempotent-replayed") === null)).toHaveLength(1);
  expect(await t.deps.repos.activations.listByLicense(license.id)).toHaveLength(1);
});

test("parallel floating checkouts with one key → one session", async () => {
  const { key, license } = await catalog(t, { floating: true, maxActivations: 5 });
  const results = await all(20, () =>
    postJson(s.url, "/license/floating/checkout", { license_key: key, identifier: "w" }, { "idempotency-key": "race-fl" }),
  );
  expect(new Set(results.filter((r) => r.status === 200).map((r) => r.body.data.session_id)).size).toBe(1);
  expect(await t.deps.repos.floating.listActive(license.id, t.clock.now())).toHaveLength(1);
});
