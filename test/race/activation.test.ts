// Guards spec License rule 1: "Activate enforces max_activations atomically (concurrent retries
// never exceed it)". A check-then-insert outside one write transaction lets several requests see
// "4 of 5 used" at once and all insert.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createTestApp, type TestApp } from "../support/app";
import { catalog } from "../support/license-api";
import type { RunningServer } from "../../src/server";
import { all, postJson, tally } from "./support";

let t: TestApp;
let s: RunningServer;
beforeAll(async () => {
  t = await createTestApp();
  s = t.listen();
});
afterAll(() => t.close());

test("200 concurrent activations with distinct identifiers against max_activations = 5 → exactly 5", async () => {
  const { key, license } = await catalog(t, { maxActivations: 5 });
  const results = await all(200, (i) => postJson(s.url, "/license/activate", { license_key: key, identifier: `device-${i}` }));
  expect(tally(results)).toEqual({ 200: 5, 409: 195 });
  expect(results.filter((r) => r.status === 409).every((r) => r.body.error.code === "ACTIVATION_LIMIT")).toBe(true);
  expect(results.filter((r) => r.status === 200).every((r) => r.body.data.status === "activated")).toBe(true);
  expect(await t.deps.repos.activations.listByLicense(license.id)).toHaveLength(5);
});

test("50 concurrent activations of one identifier → one slot", async () => {
  const { key, license } = await catalog(t, { maxActivations: 5 });
  const results = await all(50, () => postJson(s.url, "/license/activate", { license_key: key, identifier: "the-one-device" }));
  expect(tally(results)).toEqual({ 200: 50 });
  const statuses = results.map((r) => r.body.data.status);
  expect(statuses.filter((x) => x === "activated")).toHaveLength(1);
  expect(statuses.filter((x) => x === "already_activated")).toHaveLength(49);
  expect(await t.deps.repos.activations.listByLicense(license.id)).toHaveLength(1);
});

test("concurrent deactivate + activate never exceeds the limit", async () => {
  const { key, license } = await catalog(t, { maxActivations: 3 });
  for (let i = 0; i < 3; i++) await postJson(s.url, "/license/activate", { license_key: key, identifier: `seed-${i}` });
  const results = await all(60, (i) =>
    i % 20 === 0
      ? postJson(s.url, "/license/deactivate", { license_key: key, identifier: `seed-${i / 20}` })
      : postJson(s.url, "/license/activate", { license_key: key, identifier: `new-${i}` }),
  );
  expect(results.every((r) => r.status < 500)).toBe(true);
  expect(results.filter((_, i) => i % 20 === 0).every((r) => r.status === 200)).toBe(true);
  // Whatever order the server saw them in, only freed slots were refilled: never more than 3.
  const activated = results.filter((r) => r.status === 200 && r.body.data?.status === "activated").length;
  expect(activated).toBeLessThanOrEqual(3);
  expect(await t.deps.repos.activations.listByLicense(license.id)).toHaveLength(activated);
});
