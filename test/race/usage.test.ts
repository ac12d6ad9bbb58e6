// Guards spec License rule 3: "Usage increments are atomic: concurrent requests never exceed the
// quota". A read-check-increment split across statements overshoots under load.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createTestApp, type TestApp } from "../support/app";
import { catalog, quota } from "../support/license-api";
import type { RunningServer } from "../../src/server";
import { all, postJson, tally } from "./support";

let t: TestApp;
let s: RunningServer;
beforeAll(async () => {
  t = await createTestApp(); // clock: 2026-11-21T08:00:00Z
  s = t.listen();
});
afterAll(() => t.close());

test("1000 concurrent increments against a limit of 500 → exactly 500 accepted, counter 500", async () => {
  const { key, license } = await catalog(t, {}, [quota("api", 500)]);
  const results = await all(1000, (i) => postJson(s.url, "/license/usage", { license_key: key, feature: "api", metadata: { i } }));
  expect(tally(results)).toEqual({ 200: 500, 429: 500 });
  expect(results.filter((r) => r.status === 429).every((r) => r.body.error.code === "QUOTA_EXCEEDED")).toBe(true);
  expect(Math.max(...results.filter((r) => r.status === 200).map((r) => r.body.data.used))).toBe(500);
  // Every accepted report saw a distinct counter value: 1..500, no lost update.
  expect(new Set(results.filter((r) => r.status === 200).map((r) => r.body.data.used)).size).toBe(500);
  expect(await t.deps.repos.usage.used(license.id, "api", "2026-11")).toBe(500);
  const status = await postJson(s.url, "/license/usage/status", { license_key: key, feature: "api" });
  expect(status.body.data).toMatchObject({ used: 500, limit: 500, remaining: 0 });
});

test("mixed quantities never overshoot", async () => {
  const { key, license } = await catalog(t, {}, [quota("api", 100)]);
  const results = await all(200, (i) => postJson(s.url, "/license/usage", { license_key: key, feature: "api", quantity: (i % 7) + 1 }));
  const quantities = results.map((_, i) => (i % 7) + 1);
  const acceptedSum = results.reduce((n, r, i) => (r.status === 200 ? n + quantities[i]! : n), 0);
  const used = await t.deps.repos.usage.used(license.id, "api", "2026-11");
  expect(used).toBeLessThanOrEqual(100);
  expect(used).toBe(acceptedSum); // every accepted report counted, nothing else
  expect(results.every((r) => r.status === 200 || r.status === 429)).toBe(true);
  // Once accepted reports stop fitting, the counter is within one max quantity of the limit.
  expect(used).toBeGreaterThan(100 - 7);
});

test("quota rollover at a UTC period boundary (injected clock)", async () => {
  const { key, license } = await catalog(t, {}, [quota("api", 50, "daily")]);
  t.clock.set("2026-11-21T23:59:59.999Z");
  const before = await all(80, () => postJson(s.url, "/license/usage", { license_key: key, feature: "api" }));
  expect(tally(before)).toEqual({ 200: 50, 429: 30 });
  t.clock.set("2026-11-22T00:00:00.000Z");
  const after = await all(80, () => postJson(s.url, "/license/usage", { license_key: key, feature: "api" }));
  expect(tally(after)).toEqual({ 200: 50, 429: 30 });
  expect(after.find((r) => r.status === 200)!.body.data.period_key).toBe("2026-11-22");
  expect(await t.deps.repos.usage.used(license.id, "api", "2026-11-21")).toBe(50);
  expect(await t.deps.repos.usage.used(license.id, "api", "2026-11-22")).toBe(50);
});
