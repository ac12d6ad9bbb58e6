// The lane (src/http/lane.ts) serves the public license API's exact paths; Elysia still serves every
// other spelling of them (a trailing slash) through its own composed handler and hook chain. So each
// request below is sent twice, to `/license/x` (the lane) and `/license/x/` (Elysia), and the two
// answers must be the same bytes: status, the headers a client reads, and the body (a token compared
// by its claims, its nonce and signature aside). That proves the lane runs the same hooks, validators
// and handler as Elysia would, case by case, for success, refusals and hostile input.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createTestApp, type TestApp } from "../support/app";
import { catalog, decodeToken, feature, post, quota } from "../support/license-api";
import { LANE_PATHS } from "../../src/app";
import { createLogger } from "../../src/shared/logger";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

interface Sent {
  status: number;
  headers: Record<string, string | null>;
  body: unknown;
}

/** Headers a client reads; the request id is compared separately (it is the request's own). */
const SHOWN = ["content-type", "retry-after", "idempotent-replayed"];

function normalize(body: unknown): unknown {
  if (Array.isArray(body)) return body.map(normalize);
  if (body === null || typeof body !== "object") return body;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(body)) {
    if (k === "token" && typeof v === "string") {
      const { nce: _nonce, ...claims } = decodeToken(v);
      out[k] = { claims, signatureBytes: Buffer.from(v.split(".")[1]!, "base64url").length };
    } else out[k] = normalize(v);
  }
  return out;
}

async function send(app: TestApp, path: string, body: NonNullable<RequestInit["body"]> | null, headers: Record<string, string>): Promise<Sent> {
  const res = await app.app.handle(new Request(`http://localhost/api/v1${path}`, { method: "POST", body, headers }));
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // compared as text
  }
  expect(res.headers.get("x-request-id")).toMatch(/^[A-Za-z0-9._:-]{8,128}$/);
  return { status: res.status, headers: Object.fromEntries(SHOWN.map((h) => [h, res.headers.get(h)])), body: normalize(parsed) };
}

/** The same request to the lane's path and to Elysia's spelling of it; both answers, lane first. */
async function both(path: string, body: NonNullable<RequestInit["body"]> | null, headers: Record<string, string> = { "content-type": "application/json" }, app = t) {
  const lane = await send(app, path, body, headers);
  const elysia = await send(app, `${path}/`, body, headers);
  return { lane, elysia };
}

const json = (v: unknown) => JSON.stringify(v);

describe("the lane answers as Elysia's own pipeline does", () => {
  test("the lane serves exactly the public license routes, all of them POST routes of the app", async () => {
    expect(LANE_PATHS.map((p) => p.replace("/api/v1", "")).sort()).toEqual([
      "/license/activate",
      "/license/deactivate",
      "/license/entitlements",
      "/license/floating/checkin",
      "/license/floating/checkout",
      "/license/floating/heartbeat",
      "/license/usage",
      "/license/usage/status",
      "/license/verify",
    ]);
    const table = await t.app.routes();
    for (const path of LANE_PATHS) expect(table.some((r) => r.method === "POST" && r.path === path)).toBe(true);
  });

  test("the lane is what answers its paths: Bun's router gets its handlers, and app.handle calls them", async () => {
    const routes = t.app.laneRoutes as Record<string, Record<string, (r: Request) => Promise<Response>>>;
    expect(Object.keys(routes).sort()).toEqual([...LANE_PATHS].sort());
    for (const path of LANE_PATHS) expect(Object.keys(routes[path]!)).toEqual(["POST"]);
    // The handler objects are the lane's own: a wrapped handler is what app.handle runs for its path
    // (and only for that exact spelling; Elysia answers the trailing slash).
    const verify = routes["/api/v1/license/verify"]!;
    const original = verify.POST!;
    const seen: string[] = [];
    verify.POST = (request) => (seen.push(new URL(request.url).pathname), original(request));
    try {
      const body = json({ license_key: "KW-X", identifier: "a" });
      await send(t, "/license/verify", body, { "content-type": "application/json" });
      await send(t, "/license/verify/", body, { "content-type": "application/json" });
      expect(seen).toEqual(["/api/v1/license/verify"]);
    } finally {
      verify.POST = original;
    }
  });

  // Hostile and malformed input, on every lane route: each answer comes from a hook or a validator.
  const hostile: [string, NonNullable<RequestInit["body"]> | null, Record<string, string>][] = [
    ["malformed JSON", "{bad", { "content-type": "application/json" }],
    ["a text/plain body", json({ license_key: "KW-X", identifier: "a" }), { "content-type": "text/plain" }],
    ["no content type", json({ license_key: "KW-X", identifier: "a" }), {}],
    ["an unknown field", json({ license_key: "KW-X", identifier: "a", feature: "f", extra: 1 }), { "content-type": "application/json" }],
    ["a number for a string", json({ license_key: 7, identifier: "a", feature: "f" }), { "content-type": "application/json" }],
    ["an array body", "[1,2]", { "content-type": "application/json" }],
    ["an empty body", "", { "content-type": "application/json" }],
    ["invalid UTF-8", new Uint8Array([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]), { "content-type": "application/json" }],
    ["a lone surrogate", '{"license_key":"KW-X","identifier":"\\ud800","feature":"f"}', { "content-type": "application/json" }],
    ["nesting past the limit", `{"license_key":"x","identifier":${'{"a":'.repeat(40)}1${"}".repeat(40)}}`, { "content-type": "application/json" }],
    ["a body over the size limit", json({ license_key: "x".repeat(200_000), identifier: "a" }), { "content-type": "application/json" }],
    ["an unknown key", json({ license_key: "KW-AAAAAAAA-BBBBBBBB-CCCCCCCC-DDDDDDDD", identifier: "a", feature: "f" }), { "content-type": "application/json" }],
    ["a product id that is no uuid", json({ license_key: "KW-X", identifier: "a", feature: "f", product_id: "p" }), { "content-type": "application/json" }],
  ];
  for (const path of LANE_PATHS) {
    const route = path.replace("/api/v1", "");
    test(`${route}: ${hostile.length} kinds of bad input get the same refusal from both`, async () => {
      for (const [what, body, headers] of hostile) {
        const { lane, elysia } = await both(route, body, headers);
        expect({ what, ...lane }).toEqual({ what, ...elysia });
        expect(lane.status).toBeGreaterThanOrEqual(400);
        expect(lane.status).toBeLessThan(500);
      }
    });
  }

  test("a client's X-Request-Id is echoed by both; a malformed one is replaced", async () => {
    const body = json({ license_key: "KW-X", identifier: "a" });
    for (const suffix of ["", "/"]) {
      const ok = await t.app.handle(
        new Request(`http://localhost/api/v1/license/verify${suffix}`, { method: "POST", body, headers: { "content-type": "application/json", "x-request-id": "client-req-0001" } }),
      );
      expect(ok.headers.get("x-request-id")).toBe("client-req-0001");
      const bad = await t.app.handle(
        new Request(`http://localhost/api/v1/license/verify${suffix}`, { method: "POST", body, headers: { "content-type": "application/json", "x-request-id": "bad id\u0007" } }),
      );
      expect(bad.headers.get("x-request-id")).not.toBe("bad id\u0007");
      expect(bad.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
    }
  });

  test("successes: verify, entitlements, usage status, a repeat activation, and refusals by the services", async () => {
    const c = await catalog(t, { maxActivations: 1 }, [feature("export"), quota("api", 5)]);
    expect((await post(t, "/license/activate", { license_key: c.key, identifier: "dev-1" })).status).toBe(200);
    const cases: [string, unknown][] = [
      ["/license/verify", { license_key: c.key, identifier: "dev-1" }],
      ["/license/verify", { license_key: c.key, identifier: "dev-1", product_id: c.product.id }],
      ["/license/verify", { license_key: ` ${c.key.toLowerCase()} `, identifier: "dev-1" }],
      ["/license/verify", { license_key: c.key, identifier: "never-activated" }],
      ["/license/entitlements", { license_key: c.key }],
      ["/license/entitlements", { license_key: c.key, feature: "export" }],
      ["/license/usage/status", { license_key: c.key, feature: "api" }],
      ["/license/activate", { license_key: c.key, identifier: "dev-1", label: "Laptop" }],
      // The one slot is taken: 409 ACTIVATION_LIMIT, twice.
      ["/license/activate", { license_key: c.key, identifier: "dev-2" }],
      // More than the quota: 429 QUOTA_EXCEEDED, nothing consumed, twice.
      ["/license/usage", { license_key: c.key, feature: "api", quantity: 6 }],
      ["/license/deactivate", { license_key: c.key, identifier: "not-there" }],
      // Not a floating plan.
      ["/license/floating/checkout", { license_key: c.key, identifier: "ws" }],
      ["/license/floating/heartbeat", { license_key: c.key, identifier: "ws" }],
      ["/license/floating/checkin", { license_key: c.key, identifier: "ws" }],
    ];
    const statuses: number[] = [];
    for (const [route, sent] of cases) {
      const { lane, elysia } = await both(route, json(sent));
      expect({ route, sent, ...lane }).toEqual({ route, sent, ...elysia });
      statuses.push(lane.status);
    }
    expect(statuses).toEqual([200, 200, 200, 404, 200, 200, 200, 200, 409, 429, 404, 403, 404, 404]);
  });

  test("state-changing successes: the same answer for the same step, one effect each", async () => {
    const c = await catalog(t, { maxActivations: 5 }, [quota("api", null)]);
    const a = await post(t, "/license/activate", { license_key: c.key, identifier: "lane" });
    const b = await post(t, "/license/activate/", { license_key: c.key, identifier: "elysia" });
    expect([a.status, b.status, a.body.data.status, b.body.data.status]).toEqual([200, 200, "activated", "activated"]);
    const u1 = await post(t, "/license/usage", { license_key: c.key, feature: "api", quantity: 2 });
    const u2 = await post(t, "/license/usage/", { license_key: c.key, feature: "api", quantity: 3 });
    expect([u1.body.data.used, u2.body.data.used]).toEqual([2, 5]);
    const d1 = await post(t, "/license/deactivate", { license_key: c.key, identifier: "lane" });
    const d2 = await post(t, "/license/deactivate/", { license_key: c.key, identifier: "elysia" });
    expect([d1.status, d2.status, d1.body, d2.body]).toEqual([200, 200, d2.body, d1.body]);
    const f = await catalog(t, { floating: true, maxActivations: 2, floatingTimeout: 10 });
    const co1 = await post(t, "/license/floating/checkout", { license_key: f.key, identifier: "x" });
    const co2 = await post(t, "/license/floating/checkout/", { license_key: f.key, identifier: "y" });
    expect([co1.body.data.active_sessions, co2.body.data.active_sessions]).toEqual([1, 2]);
    const ci1 = await post(t, "/license/floating/checkin", { license_key: f.key, identifier: "x" });
    const ci2 = await post(t, "/license/floating/checkin/", { license_key: f.key, identifier: "y" });
    expect([ci1.status, ci2.status]).toEqual([200, 200]);
  });

  test("an Idempotency-Key replay (a Response from the handler) carries the request id and the replay header", async () => {
    const c = await catalog(t, {}, []);
    const body = json({ license_key: c.key, identifier: "idem" });
    const headers = { "content-type": "application/json", "idempotency-key": "lane-replay-1" };
    const first = await send(t, "/license/activate", body, headers);
    const replayLane = await send(t, "/license/activate", body, headers);
    const replayElysia = await send(t, "/license/activate/", body, headers);
    expect(first.status).toBe(200);
    expect(replayLane).toEqual(replayElysia);
    expect(replayLane.headers["idempotent-replayed"]).toBe("true");
    const bad = await both("/license/activate", body, { "content-type": "application/json", "idempotency-key": "" });
    expect(bad.lane).toEqual(bad.elysia);
    expect(bad.lane.status).toBe(400);
  });

  test("the rate limit counts both spellings and refuses them alike (RATE_LIMIT_PUBLIC_PER_MINUTE)", async () => {
    const limited = await createTestApp({ env: { RATE_LIMIT_PUBLIC_PER_MINUTE: "3" } });
    try {
      const body = json({ license_key: "KW-X", identifier: "a" });
      const statuses: number[] = [];
      for (const path of ["/license/verify", "/license/verify/", "/license/usage/status"]) {
        statuses.push((await send(limited, path, body, { "content-type": "application/json" })).status);
      }
      expect(statuses).toEqual([404, 404, 400]);
      const { lane, elysia } = await both("/license/verify", body, { "content-type": "application/json" }, limited);
      expect(lane).toEqual(elysia);
      expect(lane.status).toBe(429);
      expect(Number(lane.headers["retry-after"])).toBeGreaterThan(0);
    } finally {
      await limited.close();
    }
  });
});

describe("the lane outside app.handle", () => {
  test("a listening server serves the lane's paths from Bun's router, and every other spelling through Elysia", async () => {
    const server = t.listen();
    const c = await catalog(t, {}, [feature("export")]);
    const base = `${server.url}/api/v1/license`;
    const call = (path: string, init: RequestInit = {}) =>
      fetch(`${base}${path}`, { method: "POST", headers: { "content-type": "application/json" }, ...init });
    const act = await call("/activate", { body: json({ license_key: c.key, identifier: "net" }) });
    expect(act.status).toBe(200);
    for (const path of ["/verify", "/verify/", "/verify?sdk=1"]) {
      const res = await call(path, { body: json({ license_key: c.key, identifier: "net" }) });
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toBe("application/json;charset=utf-8");
      expect(res.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
      expect(((await res.json()) as { data: { features: unknown } }).data.features).toEqual({ export: true });
    }
    const get = await fetch(`${base}/verify`);
    expect(get.status).toBe(404);
    expect(((await get.json()) as { error: { code: string } }).error.code).toBe("NOT_FOUND");
    const wrongType = await call("/verify", { body: "x", headers: { "content-type": "text/plain" } });
    expect(wrongType.status).toBe(400);
  });

  test("the access log has one line per lane request, with its status and request id", async () => {
    const lines: string[] = [];
    const { createDeps } = await import("../../src/container");
    const { createApp } = await import("../../src/app");
    const deps = await createDeps({ ...t.deps.config, logLevel: "info" }, t.clock, createLogger("info", (l) => lines.push(l)));
    try {
      const app = createApp(deps);
      const res = await app.handle(
        new Request("http://localhost/api/v1/license/verify", {
          method: "POST",
          headers: { "content-type": "application/json", "x-request-id": "log-check-0001" },
          body: json({ license_key: "KW-X", identifier: "a" }),
        }),
      );
      expect(res.status).toBe(404);
      // Written after the answer, as Elysia schedules its after-response hooks.
      for (let i = 0; i < 50 && !lines.some((l) => l.includes("log-check-0001")); i++) await Bun.sleep(2);
      const line = JSON.parse(lines.find((l) => l.includes('"msg":"request"') && l.includes("log-check-0001"))!);
      expect(line).toMatchObject({ level: "info", msg: "request", method: "POST", path: "/api/v1/license/verify", status: 404, requestId: "log-check-0001" });
    } finally {
      deps.tokenKeys.stop();
      await deps.db.close();
    }
  });
});
