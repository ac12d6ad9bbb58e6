// Issue 8 point 14: GET /health stays a cheap liveness check; GET /health/ready also covers object
// storage, for load balancers: 200 when the database answers and storage is reachable (or not
// configured), 503 NOT_READY naming the failed checks otherwise — against a real s3rver that is
// stopped and started again, a hung endpoint, an unusable local directory and a closed database.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { rmSync, writeFileSync } from "node:fs";
import { createTestApp, type TestApp } from "../../support/app";
import { startS3rver, type RunningS3 } from "../../support/s3rver";

setDefaultTimeout(60_000);

const READY = "/api/v1/health/ready";
const LIVE = "/api/v1/health";

/**
 * A 200 is proof of readiness, but the storage probe has a 2 s budget that a loaded test machine
 * can overrun (the in-process s3rver shares the CPU): ask a few times and require one 200. Failures
 * need no such care: a stopped bucket never answers 200.
 */
async function readyWithin(t: TestApp, tries = 5) {
  let res = await t.request("GET", READY);
  for (let i = 1; i < tries && res.status !== 200; i++) res = await t.request("GET", READY);
  expect(res.status).toBe(200);
  return res;
}

function expectNotReady(res: { status: number; body: any }, failed: string[]) {
  expect(res.status).toBe(503);
  expect(res.body.success).toBe(false);
  expect(res.body.error.code).toBe("NOT_READY");
  expect(res.body.error.details.failed).toEqual(failed);
}

describe("local driver", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: { RATE_LIMIT_PUBLIC_PER_MINUTE: "2", TRUST_PROXY: "true" } });
  });
  afterAll(() => t.close());

  test("ready: database and a writable storage directory → 200", async () => {
    const res = await readyWithin(t);
    expect(res.body).toEqual({ success: true, data: { status: "ready", database: "ok", storage: "ok" } });
  });

  test("probes are not rate limited (a load balancer polls from one address)", async () => {
    const lb = { headers: { "x-forwarded-for": "203.0.113.9" } };
    for (let i = 0; i < 6; i++) expect((await t.request("GET", READY, lb)).status).not.toBe(429);
    expect((await t.request("GET", "/api/v1/license/pubkey", lb)).status).toBe(200); // the budget of 2 is untouched
    expect((await t.request("GET", "/api/v1/license/pubkey", lb)).status).toBe(200);
    await readyWithin(t);
  });

  test("a storage directory that cannot be written → 503 NOT_READY (storage); liveness stays 200", async () => {
    const dir = t.deps.config.storage.localDir;
    rmSync(dir, { recursive: true, force: true });
    writeFileSync(dir, "not a directory"); // what a lost mount or a wrong path looks like to the driver
    try {
      const res = await t.request("GET", READY);
      expectNotReady(res, ["storage"]);
      expect(res.body.error.details).toMatchObject({ database: "ok", storage: "down" });
      expect(res.text).not.toContain(dir); // no paths on a public route
      expect((await t.request("GET", LIVE)).status).toBe(200);
    } finally {
      rmSync(dir, { force: true });
    }
    await readyWithin(t);
  });

  test("in the OpenAPI document, public, with its 503", async () => {
    const doc = (await t.request("GET", "/api/v1/openapi.json")).body;
    const op = doc.paths["/api/v1/health/ready"]?.get;
    expect(op).toBeDefined();
    expect(op.security).toEqual([]); // public: no credential (OpenAPI security: [])
    expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(["200", "503"]));
  });

  test("a database that does not answer → 503 NOT_READY (database)", async () => {
    const u = await createTestApp();
    try {
      u.deps.db.close();
      const res = await u.request("GET", READY);
      expect(res.status).toBe(503);
      expect(res.body.error.code).toBe("NOT_READY");
      // Only the database is asserted: the storage probe races a 2 s timer, which a heavily loaded
      // test machine can lose; the storage cases above cover storage.
      expect(res.body.error.details.database).toBe("down");
      expect(res.body.error.details.failed).toContain("database");
    } finally {
      await u.close();
    }
  });
});

test("STORAGE_DRIVER=none: storage not configured is not an outage → 200", async () => {
  const t = await createTestApp({ env: { STORAGE_DRIVER: "none" } });
  try {
    const res = await t.request("GET", READY);
    expect(res.status).toBe(200); // no probe at all: nothing to time out
    expect(res.body.data).toEqual({ status: "ready", database: "ok", storage: "not_configured" });
  } finally {
    await t.close();
  }
});

describe("s3 driver (s3rver)", () => {
  let s3: RunningS3;
  let t: TestApp;
  beforeAll(async () => {
    s3 = await startS3rver();
    t = await createTestApp({ env: s3.env });
  });
  afterAll(async () => {
    await t.close();
    await s3.close();
  });

  test("bucket up → 200; s3rver stopped → 503 NOT_READY (storage), liveness 200; started again → 200", async () => {
    expect((await readyWithin(t)).body.data).toEqual({ status: "ready", database: "ok", storage: "ok" });
    await s3.stop();
    try {
      const down = await t.request("GET", READY);
      expectNotReady(down, ["storage"]);
      expect(down.body.error.details).toMatchObject({ database: "ok", storage: "down" });
      // Nothing about the endpoint or the credentials leaves on this public route.
      expect(down.text).not.toContain(s3.endpoint.split("//")[1]!);
      expect(down.text).not.toContain(s3.secretKey);
      expect((await t.request("GET", LIVE)).status).toBe(200);
    } finally {
      await s3.start();
    }
    await readyWithin(t);
  });

  test("a bucket that does not exist → 503 NOT_READY (storage)", async () => {
    const u = await createTestApp({ env: { ...s3.env, STORAGE_BUCKET: "no-such-bucket" } });
    try {
      expectNotReady(await u.request("GET", READY), ["storage"]);
    } finally {
      await u.close();
    }
  });

  test("an endpoint that accepts the connection and never answers → 503 within the probe timeout", async () => {
    const hung = Bun.serve({ hostname: "127.0.0.1", port: 0, idleTimeout: 0, fetch: () => new Promise<Response>(() => {}) });
    const u = await createTestApp({ env: { ...s3.env, STORAGE_ENDPOINT: `http://127.0.0.1:${hung.port}` } });
    try {
      expectNotReady(await u.request("GET", READY), ["storage"]);
    } finally {
      await u.close();
      hung.stop(true);
    }
  });
});
