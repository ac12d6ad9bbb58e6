// Existence oracle (spec design rule 4): POST /license/verify and /license/deactivate answer every
// failure a caller could use to probe keys with the same single response — same status, same body,
// same headers (request id and date aside) — and in the same time, so neither the body nor the
// latency tells a missing key from a suspended license. Invite acceptance likewise, when present.
//
// The latency comparison is the one timing assertion of the suite, and it is relative: all classes
// are sampled interleaved (round-robin, so machine noise hits them alike) over a real listening
// server, and the medians must agree within max(30% of the fastest median, 0.25 ms) — generous
// enough for a noisy 2-core box, far below what an early return before the key lookup or any
// per-state extra work costs on this path. A failing comparison is re-measured once; only two
// failures in a row fail the test.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { createTestApp, type TestApp } from "../support/app";
import { makeLicense, makePlan, makeProduct } from "../support/factories";
import { KeywardClient, ROUTES, fetchTransport, handleTransport, wire } from "../../bench/lib/api";
import { generateLicenseKey } from "../../src/crypto/license-key";
import { SYSTEM_ACTOR } from "../../src/shared/actor";
import { DAY } from "../../src/shared/clock";
import type { LicensePatch } from "../../src/modules/licenses/repo";
import { missingRoutes } from "./lib/routes";
import { changeLicenseNow } from "../support/license-change";

const missing = await missingRoutes("oracle", ["activate", "verify", "deactivate"]);
const inviteMissing = (await missingRoutes("oracle invites", ["invitesAccept"])).length > 0;

const WARMUP_ROUNDS = 50;
const ROUNDS = Number(process.env.ORACLE_ROUNDS ?? 200);
const IGNORED_HEADERS = new Set(["x-request-id", "date"]);

interface Probe {
  name: string;
  body: unknown;
}

let t: TestApp;
let baseUrl: string;
let licenseProbes: Probe[] = [];

/** Sets a license's state directly through the repository (the lifecycle verbs are not under test here). */
async function setState(licenseId: string, patch: LicensePatch, clearActivations = false) {
  await changeLicenseNow(t.deps, 
    licenseId,
    () => patch,
    t.clock.now(),
    () => ({ audit: { actor: SYSTEM_ACTOR, action: "test.set_state", entityType: "license", entityId: licenseId, productId: null, changes: null, at: t.clock.now() } }),
    { clearActivations },
  );
}

beforeAll(async () => {
  if (missing.length) return;
  t = await createTestApp({ env: { RATE_LIMIT_PUBLIC_PER_MINUTE: "1000000", BF_MAX_FAILS: "1000" } });
  const c = new KeywardClient(handleTransport(t.app), t.adminKey);
  const productA = await makeProduct(t.deps);
  const productB = await makeProduct(t.deps);
  const planA = await makePlan(t.deps, productA.id, { maxActivations: 5 });
  const planB = await makePlan(t.deps, productB.id, { maxActivations: 5 });
  const issue = async (productId: string, planId: string) => {
    const { license, key } = await makeLicense(t.deps, { productId, planId });
    return { id: license.id, key };
  };
  const a = await issue(productA.id, planA.id);
  const b = await issue(productB.id, planB.id);
  const suspended = await issue(productA.id, planA.id);
  const revoked = await issue(productA.id, planA.id);
  const expired = await issue(productA.id, planA.id);
  const lapsed = await issue(productA.id, planA.id);
  for (const [l, id] of [[a, "device-a"], [b, "device-b"], [suspended, "device-s"], [revoked, "device-r"], [expired, "device-e"], [lapsed, "device-v"]] as const) {
    await c.activateOk(l.key, id);
    // Each of these verifies before its state changes: the failure below is caused by the state alone.
    expect((await c.verify(l.key, id)).status).toBe(200);
  }
  await setState(suspended.id, { status: "suspended", priorStatus: "active" });
  await setState(revoked.id, { status: "revoked" }, true);
  await setState(expired.id, { status: "expired" });
  await setState(lapsed.id, { validUntil: new Date(t.clock.nowMs() - DAY) }); // still "active", past valid_until

  licenseProbes = [
    { name: "missing key", body: wire.verifyBody(generateLicenseKey("KW"), "device-a") },
    { name: "malformed key", body: wire.verifyBody("not-a-license-key", "device-a") },
    { name: "other product", body: wire.verifyBody(b.key, "device-a") },
    { name: "wrong identifier", body: wire.verifyBody(a.key, "device-never-activated") },
    { name: "suspended", body: wire.verifyBody(suspended.key, "device-s") },
    { name: "revoked", body: wire.verifyBody(revoked.key, "device-r") },
    { name: "expired", body: wire.verifyBody(expired.key, "device-e") },
    { name: "past valid_until", body: wire.verifyBody(lapsed.key, "device-v") },
  ];
  baseUrl = t.listen().url;
});

afterAll(async () => {
  await t?.close();
});

async function send(path: string, body: unknown): Promise<{ status: number; text: string; headers: Headers; ms: number }> {
  const t0 = performance.now();
  const res = await fetch(`${baseUrl}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, text, headers: res.headers, ms: performance.now() - t0 };
}

function headerSignature(h: Headers): string {
  return [...h.entries()]
    .filter(([k]) => !IGNORED_HEADERS.has(k.toLowerCase()))
    .map(([k, v]) => `${k.toLowerCase()}: ${v}`)
    .sort()
    .join("\n");
}

async function expectIdenticalFailures(path: string, probes: Probe[], code: string) {
  const responses = [];
  for (const p of probes) responses.push({ name: p.name, ...(await send(path, p.body)) });
  const first = responses[0]!;
  expect(first.status).toBe(404);
  expect(JSON.parse(first.text).error.code).toBe(code);
  for (const r of responses) {
    expect({ class: r.name, status: r.status, body: r.text }).toEqual({ class: r.name, status: first.status, body: first.text });
    expect({ class: r.name, headers: headerSignature(r.headers) }).toEqual({ class: r.name, headers: headerSignature(first.headers) });
  }
}

function median(xs: number[]): number {
  const s = [...xs].sort((x, y) => x - y);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** Interleaved sampling; returns per-class medians and whether they agree within the tolerance. */
async function measure(path: string, probes: Probe[]): Promise<{ medians: Record<string, number>; ok: boolean; allowed: number; spread: number }> {
  const samples: number[][] = probes.map(() => []);
  for (let round = 0; round < WARMUP_ROUNDS + ROUNDS; round++) {
    // Rotate the starting class each round so no class always follows the same neighbour.
    for (let j = 0; j < probes.length; j++) {
      const i = (round + j) % probes.length;
      const r = await send(path, probes[i]!.body);
      if (round >= WARMUP_ROUNDS) samples[i]!.push(r.ms);
    }
  }
  const meds = samples.map(median);
  const fastest = Math.min(...meds);
  const spread = Math.max(...meds) - fastest;
  const allowed = Math.max(0.3 * fastest, 0.25);
  const medians = Object.fromEntries(probes.map((p, i) => [p.name, Math.round(meds[i]! * 1000) / 1000]));
  return { medians, ok: spread <= allowed, allowed, spread };
}

async function expectSameLatency(label: string, path: string, probes: Probe[]) {
  let m = await measure(path, probes);
  console.log(`${label}: median ms per class ${JSON.stringify(m.medians)}; spread ${m.spread.toFixed(3)} ms (allowed ${m.allowed.toFixed(3)})`);
  if (!m.ok) {
    m = await measure(path, probes);
    console.log(`${label} (re-measured): ${JSON.stringify(m.medians)}; spread ${m.spread.toFixed(3)} ms (allowed ${m.allowed.toFixed(3)})`);
  }
  expect({ label, spreadWithinNoise: m.ok, medians: m.medians }).toEqual({ label, spreadWithinNoise: true, medians: m.medians });
}

describe.skipIf(missing.length > 0)("existence oracle", () => {
  test("verify: every failure class gets the identical 404 LICENSE_NOT_FOUND", async () => {
    await expectIdenticalFailures(ROUTES.verify, licenseProbes, "LICENSE_NOT_FOUND");
  });

  test("deactivate: every failure class gets the identical 404 LICENSE_NOT_FOUND", async () => {
    await expectIdenticalFailures(ROUTES.deactivate, licenseProbes, "LICENSE_NOT_FOUND");
  });

  test("verify: failure classes are indistinguishable by median latency", async () => {
    await expectSameLatency("verify", ROUTES.verify, licenseProbes);
  }, 30_000);

  test("deactivate: failure classes are indistinguishable by median latency", async () => {
    await expectSameLatency("deactivate", ROUTES.deactivate, licenseProbes);
  }, 30_000);

  // Invite acceptance: only the classes that need no seat fixtures (well-formed unknown tokens);
  // expired, removed and already-accepted invites need the seats feature's own factories.
  test.skipIf(inviteMissing)("invite accept: unknown tokens get the identical 404 SEAT_INVITE_INVALID in the same time", async () => {
    const probes: Probe[] = [
      { name: "unknown token 1", body: wire.inviteAcceptBody(randomBytes(32).toString("hex")) },
      { name: "unknown token 2", body: wire.inviteAcceptBody(randomBytes(32).toString("hex")) },
      { name: "all-zero token", body: wire.inviteAcceptBody("0".repeat(64)) },
    ];
    await expectIdenticalFailures(ROUTES.invitesAccept, probes, "SEAT_INVITE_INVALID");
    await expectSameLatency("invite accept", ROUTES.invitesAccept, probes);
  }, 30_000);
});
