// Concurrency rules that depend on time, with an injected clock (so one process with a listening
// server; the multi-process suites in test/race use real clocks): expired floating sessions are never
// revived by concurrent heartbeats, and a quota's period rolls over at the UTC boundary.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createTestApp, type TestApp } from "../../support/app";
import { catalog, quota } from "../../support/license-api";
import type { RunningServer } from "../../../src/server";
import { all, postJson, tally } from "../../race/support";

let t: TestApp;
let s: RunningServer;
beforeAll(async () => {
  t = await createTestApp();
  s = t.listen();
});
afterAll(() => t.close());

test("past floating_timeout, concurrent heartbeats revive nothing; the seats are free again, still exactly 3", async () => {
  const { key, license } = await catalog(t, { floating: true, maxActivations: 3, floatingTimeout: 5 });
  const results = await all(100, (i) => postJson(s.url, "/license/floating/checkout", { license_key: key, identifier: `user-${i}` }));
  expect(tally(results)).toEqual({ 200: 3, 409: 97 });
  expect(await t.deps.repos.floating.listActive(license.id, t.clock.now())).toHaveLength(3);
  const holders = results.flatMap((r, i) => (r.status === 200 ? [`user-${i}`] : []));

  t.clock.advance(5 * 60_000);
  const beats = await all(30, (i) => postJson(s.url, "/license/floating/heartbeat", { license_key: key, identifier: holders[i % 3]! }));
  expect(tally(beats)).toEqual({ 404: 30 });
  expect(await t.deps.repos.floating.listActive(license.id, t.clock.now())).toHaveLength(0);

  const again = await all(50, (i) => postJson(s.url, "/license/floating/checkout", { license_key: key, identifier: `late-${i}` }));
  expect(tally(again)).toEqual({ 200: 3, 409: 47 });
  const oldIds = new Set(results.filter((r) => r.status === 200).map((r) => r.body.data.session_id));
  expect(again.filter((r) => r.status === 200).some((r) => oldIds.has(r.body.data.session_id))).toBe(false);
});

test("quota rollover at a UTC period boundary", async () => {
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
