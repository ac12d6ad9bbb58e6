import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createTestApp, type TestApp } from "../../support/app";
import { catalog, post } from "../../support/license-api";

const UNKNOWN = "KW-AAAAAAAA-AAAAAAAA-AAAAAAAA-AAAAAAAA";

describe("brute-force lockout on activate (TRUST_PROXY=true)", () => {
  let t: TestApp;
  beforeAll(() => {
    t = createTestApp({ env: { TRUST_PROXY: "true", BF_MAX_FAILS: "3", BF_LOCKOUT_SECONDS: "30", BF_WINDOW_SECONDS: "300" } });
  });
  afterAll(() => t.close());

  const from = (ip: string) => ({ "x-forwarded-for": `${ip}, 10.0.0.1` });

  test("BF_MAX_FAILS failures lock the address; another address is unaffected; the lockout doubles on repeat", async () => {
    const { key } = catalog(t);
    const fail = (ip: string) => post(t, "/license/activate", { license_key: UNKNOWN, identifier: "x" }, from(ip));
    for (let i = 0; i < 3; i++) expect((await fail("203.0.113.7")).status).toBe(404);

    // Locked: even a valid key is refused before any lookup.
    const locked = await post(t, "/license/activate", { license_key: key, identifier: "x" }, from("203.0.113.7"));
    expect(locked.status).toBe(429);
    expect(locked.body.error.code).toBe("LOCKED_OUT");
    expect(locked.headers.get("retry-after")).toBe("30");

    // Another address is unaffected.
    expect((await post(t, "/license/activate", { license_key: key, identifier: "y" }, from("198.51.100.2"))).status).toBe(200);

    t.clock.advance(10_000);
    expect((await fail("203.0.113.7")).headers.get("retry-after")).toBe("20");
    t.clock.advance(20_000);
    expect((await post(t, "/license/activate", { license_key: key, identifier: "x" }, from("203.0.113.7"))).status).toBe(200);

    // Second lockout: twice as long.
    for (let i = 0; i < 3; i++) expect((await fail("203.0.113.7")).status).toBe(404);
    const again = await fail("203.0.113.7");
    expect(again.status).toBe(429);
    expect(again.headers.get("retry-after")).toBe("60");
    t.clock.advance(60_000);
    for (let i = 0; i < 3; i++) await fail("203.0.113.7");
    expect((await fail("203.0.113.7")).headers.get("retry-after")).toBe("120");
  });

  test("malformed and other-product keys count as failures; inactive licenses and successes do not", async () => {
    const { key } = catalog(t);
    const other = catalog(t);
    const ip = "192.0.2.55";
    expect((await post(t, "/license/activate", { license_key: "junk", identifier: "x" }, from(ip))).status).toBe(404);
    expect((await post(t, "/license/activate", { license_key: key, identifier: "x", product_id: other.product.id }, from(ip))).status).toBe(404);
    for (let i = 0; i < 5; i++) expect((await post(t, "/license/activate", { license_key: key, identifier: `ok${i}` }, from(ip))).status).not.toBe(429);
    expect((await post(t, "/license/activate", { license_key: UNKNOWN, identifier: "x" }, from(ip))).status).toBe(404);
    expect((await post(t, "/license/activate", { license_key: key, identifier: "x" }, from(ip))).status).toBe(429);
  });

  test("failures spread wider than BF_WINDOW_SECONDS do not lock", async () => {
    const ip = "192.0.2.99";
    for (let i = 0; i < 6; i++) {
      expect((await post(t, "/license/activate", { license_key: UNKNOWN, identifier: "x" }, from(ip))).status).toBe(404);
      t.clock.advance(151_000); // two failures per 300 s window at most
    }
  });

  test("verify is not subject to the activate lockout", async () => {
    const ip = "192.0.2.200";
    const { key } = catalog(t);
    await post(t, "/license/activate", { license_key: key, identifier: "v" }, from("192.0.2.201"));
    for (let i = 0; i < 3; i++) await post(t, "/license/activate", { license_key: UNKNOWN, identifier: "x" }, from(ip));
    expect((await post(t, "/license/verify", { license_key: key, identifier: "v" }, from(ip))).status).toBe(200);
  });
});

describe("without TRUST_PROXY the socket address counts (X-Forwarded-For cannot dodge the lockout)", () => {
  test("over a real connection", async () => {
    const t = createTestApp({ env: { BF_MAX_FAILS: "2" } });
    const s = t.listen();
    try {
      const call = (xff: string) =>
        fetch(`${s.url}/api/v1/license/activate`, {
          method: "POST",
          headers: { "content-type": "application/json", "x-forwarded-for": xff },
          body: JSON.stringify({ license_key: UNKNOWN, identifier: "x" }),
        });
      expect((await call("1.1.1.1")).status).toBe(404);
      expect((await call("2.2.2.2")).status).toBe(404);
      const locked = await call("3.3.3.3");
      expect(locked.status).toBe(429);
      expect(locked.headers.get("retry-after")).toBe("30");
      // The address really comes from the socket: an admin mutation over the same server records it.
      const created = await fetch(`${s.url}/api/v1/admin/products`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${t.adminKey}`, "x-forwarded-for": "9.9.9.9" },
        body: JSON.stringify({ name: "Socket", slug: "socket-ip" }),
      });
      const id = ((await created.json()) as { data: { id: string } }).data.id;
      const audit = await t.request("GET", `/api/v1/admin/audit?entity_id=${id}`);
      expect(audit.body.data.items[0].ip).toBe("127.0.0.1");
    } finally {
      await t.close();
    }
  });
});
