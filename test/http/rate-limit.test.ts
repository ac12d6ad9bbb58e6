import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { createTestApp, type TestApp } from "../support/app";
import { SHARED_FLUSH_INTERVAL_MS } from "../../src/modules/abuse/rate-limit.sqlite";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ env: { RATE_LIMIT_PUBLIC_PER_MINUTE: "5", TRUST_PROXY: "true" } });
});
afterAll(() => t.close());

const from = (ip: string) => ({ headers: { "x-forwarded-for": ip } });

describe("public rate limit", () => {
  test("the sixth public request in a minute from one address is 429 RATE_LIMITED with Retry-After", async () => {
    for (let i = 0; i < 5; i++) expect((await t.request("GET", "/api/v1/license/pubkey", from("203.0.113.1"))).status).toBe(200);
    const res = await t.request("GET", "/api/v1/license/pubkey", from("203.0.113.1"));
    expect(res.status).toBe(429);
    expect(res.body).toEqual({ success: false, error: { code: "RATE_LIMITED", message: expect.any(String), details: { retry_after: expect.any(Number) } } });
    const retryAfter = Number(res.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    // Feeds share the same budget.
    expect((await t.request("GET", "/api/v1/releases/none/feed.json?platform=linux-x64", from("203.0.113.1"))).status).toBe(429);
  });

  test("another address is unaffected, and admin and health routes are not limited", async () => {
    expect((await t.request("GET", "/api/v1/license/pubkey", from("203.0.113.2"))).status).toBe(200);
    for (let i = 0; i < 8; i++) {
      expect((await t.request("GET", "/api/v1/health", from("203.0.113.1"))).status).toBe(200);
      expect((await t.request("GET", "/api/v1/admin/products", from("203.0.113.1"))).status).toBe(200);
    }
  });

  test("sign-in and portal routes spend the same budget (an OAuth callback costs a provider call)", async () => {
    const ip = "203.0.113.9";
    const paths = ["/api/v1/auth/providers", "/api/v1/auth/me", "/api/v1/portal/licenses", "/api/v1/auth/oauth/github/callback", "/api/v1/auth/providers"];
    for (const p of paths) expect((await t.request("GET", p, from(ip))).status).not.toBe(429);
    for (const p of paths) expect((await t.request("GET", p, from(ip))).status).toBe(429);
  });

  test("the budget comes back as the window slides", async () => {
    t.clock.advance(2 * 60_000);
    expect((await t.request("GET", "/api/v1/license/pubkey", from("203.0.113.1"))).status).toBe(200);
  });
});

describe("RATE_LIMIT_PUBLIC_PER_MINUTE=0", () => {
  test("disables the limit", async () => {
    const u = await createTestApp({ env: { RATE_LIMIT_PUBLIC_PER_MINUTE: "0" } });
    try {
      for (let i = 0; i < 50; i++) expect((await u.request("GET", "/api/v1/license/pubkey")).status).toBe(200);
    } finally {
      await u.close();
    }
  });
});

// DECISIONS (Abuse limits): "Limiter state must be shared by all nodes when the DB is shared." Two
// apps on one data directory are two nodes: a budget spent on one is spent on the other.
describe("two nodes on one database", () => {
  test("requests counted by one node count against the same address on the other", async () => {
    const env = { RATE_LIMIT_PUBLIC_PER_MINUTE: "5", TRUST_PROXY: "true", RELEASE_KEY_ENCRYPTION_KEY: randomBytes(32).toString("hex") };
    const a = await createTestApp({ env });
    const b = await createTestApp({ env, sameDatabaseAs: a });
    try {
      for (let i = 0; i < 5; i++) expect((await a.request("GET", "/api/v1/license/pubkey", from("198.51.100.7"))).status).toBe(200);
      // Node a writes its counts in the background (at most SHARED_FLUSH_INTERVAL_MS later).
      await Bun.sleep(SHARED_FLUSH_INTERVAL_MS * 2.5);
      const res = await b.request("GET", "/api/v1/license/pubkey", from("198.51.100.7"));
      expect(res.status).toBe(429);
      expect(res.body.error.code).toBe("RATE_LIMITED");
      // Another address still has its whole budget on b.
      expect((await b.request("GET", "/api/v1/license/pubkey", from("198.51.100.8"))).status).toBe(200);
    } finally {
      await b.close();
      await a.close();
    }
  });
});

// Issue 8 point 4: with a trusted proxy the limit follows the address the proxy appended (right-most),
// not the client's own first entry. The test plays the proxy over a real connection.
describe("behind a trusted proxy, rotating fake X-Forwarded-For entries does not reset the budget", () => {
  for (const trustProxy of ["1", "127.0.0.1/32"]) {
    test(`TRUST_PROXY=${trustProxy}`, async () => {
      const u = await createTestApp({ env: { RATE_LIMIT_PUBLIC_PER_MINUTE: "5", TRUST_PROXY: trustProxy } });
      const s = u.listen();
      try {
        const get = (xff: string) => fetch(`${s.url}/api/v1/license/pubkey`, { headers: { "x-forwarded-for": xff } });
        for (let i = 0; i < 5; i++) expect((await get(`10.${i}.0.1, 203.0.113.50`)).status).toBe(200);
        const limited = await get("10.99.0.1, 203.0.113.50");
        expect(limited.status).toBe(429);
        expect(((await limited.json()) as { error: { code: string } }).error.code).toBe("RATE_LIMITED");
        // Another real client behind the same proxy has its own budget.
        expect((await get("10.99.0.1, 203.0.113.51")).status).toBe(200);
      } finally {
        await u.close();
      }
    });
  }
});
