// Guards spec License rule 4: "Floating checkout is atomic against max_activations", and DECISIONS:
// expired sessions never count and are never revived.
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

test("100 concurrent checkouts with distinct identifiers against 3 seats → exactly 3 sessions", async () => {
  const { key, license } = await catalog(t, { floating: true, maxActivations: 3, floatingTimeout: 5 });
  const results = await all(100, (i) => postJson(s.url, "/license/floating/checkout", { license_key: key, identifier: `user-${i}` }));
  expect(tally(results)).toEqual({ 200: 3, 409: 97 });
  for (const r of results.filter((x) => x.status === 409)) {
    expect(r.body.error).toMatchObject({ code: "FLOATING_LIMIT", details: { active_sessions: 3, max_sessions: 3 } });
  }
  expect(await t.deps.repos.floating.listActive(license.id, t.clock.now())).toHaveLength(3);
  const holders = results.flatMap((r, i) => (r.status === 200 ? [`user-${i}`] : []));

  // Past floating_timeout without heartbeat: concurrent heartbeats do not revive any session.
  t.clock.advance(5 * 60_000);
  const beats = await all(30, (i) => postJson(s.url, "/license/floating/heartbeat", { license_key: key, identifier: holders[i % 3]! }));
  expect(tally(beats)).toEqual({ 404: 30 });
  expect(await t.deps.repos.floating.listActive(license.id, t.clock.now())).toHaveLength(0);

  // The seats are free again, still exactly 3 under contention, with new session ids.
  const again = await all(50, (i) => postJson(s.url, "/license/floating/checkout", { license_key: key, identifier: `late-${i}` }));
  expect(tally(again)).toEqual({ 200: 3, 409: 47 });
  const oldIds = new Set(results.filter((r) => r.status === 200).map((r) => r.body.data.session_id));
  expect(again.filter((r) => r.status === 200).some((r) => oldIds.has(r.body.data.session_id))).toBe(false);
});

test("concurrent re-checkouts of one identifier keep one session", async () => {
  const { key, license } = await catalog(t, { floating: true, maxActivations: 2 });
  const results = await all(40, () => postJson(s.url, "/license/floating/checkout", { license_key: key, identifier: "same" }));
  expect(tally(results)).toEqual({ 200: 40 });
  expect(new Set(results.map((r) => r.body.data.session_id)).size).toBe(1);
  expect(await t.deps.repos.floating.listActive(license.id, t.clock.now())).toHaveLength(1);
});
