import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createTestApp, type TestApp } from "../../support/app";
import { catalog, post } from "../../support/license-api";

const UNKNOWN = "KW-AAAAAAAA-AAAAAAAA-AAAAAAAA-AAAAAAAA";

describe("brute-force lockout on activate (TRUST_PROXY=true: one proxy, in-process as the peer)", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: { TRUST_PROXY: "true", BF_MAX_FAILS: "3", BF_LOCKOUT_SECONDS: "30", BF_WINDOW_SECONDS: "300" } });
  });
  afterAll(() => t.close());

  // The proxy appends the address it saw: the right-most entry. The first one is whatever the client sent.
  const from = (ip: string) => ({ "x-forwarded-for": `10.0.0.1, ${ip}` });

  test("BF_MAX_FAILS failures lock the address; another address is unaffected; the lockout doubles on repeat", async () => {
    const { key } = await catalog(t);
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
    const { key } = await catalog(t);
    const other = await catalog(t);
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
    const { key } = await catalog(t);
    await post(t, "/license/activate", { license_key: key, identifier: "v" }, from("192.0.2.201"));
    for (let i = 0; i < 3; i++) await post(t, "/license/activate", { license_key: UNKNOWN, identifier: "x" }, from(ip));
    expect((await post(t, "/license/verify", { license_key: key, identifier: "v" }, from(ip))).status).toBe(200);
  });
});

/** An activation with an unknown key over a real connection, with the given X-Forwarded-For. */
const activateVia = (url: string, xff: string) =>
  fetch(`${url}/api/v1/license/activate`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-forwarded-for": xff },
    body: JSON.stringify({ license_key: UNKNOWN, identifier: "x" }),
  });

describe("without TRUST_PROXY the socket address counts (X-Forwarded-For cannot dodge the lockout)", () => {
  test("over a real connection", async () => {
    const t = await createTestApp({ env: { BF_MAX_FAILS: "2" } });
    const s = t.listen();
    try {
      const call = (xff: string) => activateVia(s.url, xff);
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

// Issue 8 point 4: proxies APPEND the real address to whatever the client sent, so the left-most
// X-Forwarded-For entry is the client's own invention. Here the test plays the proxy on a real
// connection (socket peer 127.0.0.1): it appends the attacker's real address after a fake first entry
// that changes on every request, and once names a victim's address as that fake entry.
describe("behind proxies, a client rotating fake first X-Forwarded-For entries is still locked out", () => {
  const ATTACKER = "203.0.113.66";
  const VICTIM = "198.51.100.2";
  for (const [name, trustProxy, hopsInFront] of [
    ["TRUST_PROXY=true (one hop)", "true", [] as string[]],
    ["TRUST_PROXY=2 (CDN edge → load balancer)", "2", ["198.18.0.9"]],
    ["TRUST_PROXY=CIDR list including the peer", "127.0.0.0/8, ::1, 198.18.0.0/15", ["198.18.0.9"]],
  ] as const) {
    test(name, async () => {
      const t = await createTestApp({ env: { TRUST_PROXY: trustProxy, BF_MAX_FAILS: "3" } });
      const s = t.listen();
      try {
        const { key } = await catalog(t);
        // What arrives at Keyward: the client's fake entry, the real client address (appended by the
        // outermost proxy), then the addresses the inner proxies appended.
        const call = (licenseKey: string, fake: string, real: string) =>
          fetch(`${s.url}/api/v1/license/activate`, {
            method: "POST",
            headers: { "content-type": "application/json", "x-forwarded-for": [fake, real, ...hopsInFront].join(", ") },
            body: JSON.stringify({ license_key: licenseKey, identifier: `id-${fake}` }),
          });
        // The first fake entry names the victim; the others rotate.
        for (const fake of [VICTIM, "1.1.1.1", "2.2.2.2"]) expect((await call(UNKNOWN, fake, ATTACKER)).status).toBe(404);
        const locked = await call(key, "4.4.4.4", ATTACKER);
        expect(locked.status).toBe(429);
        expect(((await locked.json()) as { error: { code: string } }).error.code).toBe("LOCKED_OUT");
        // The victim, whose address the attacker sent as a fake entry, is not locked out.
        expect((await call(key, "5.5.5.5", VICTIM)).status).toBe(200);
      } finally {
        await t.close();
      }
    });
  }

  test("with a CIDR list, a peer that is not a trusted proxy is the client, whatever it forwards", async () => {
    const t = await createTestApp({ env: { TRUST_PROXY: "10.0.0.0/8", BF_MAX_FAILS: "2" } });
    const s = t.listen();
    try {
      const call = (xff: string) => activateVia(s.url, xff);
      expect((await call("1.1.1.1")).status).toBe(404);
      expect((await call("2.2.2.2")).status).toBe(404);
      expect((await call("3.3.3.3")).status).toBe(429);
    } finally {
      await t.close();
    }
  });
});
