import { describe, expect, test } from "bun:test";
import { clientAddressResolver, forwardedAddress, parseTrustProxy, TrustProxyParseError } from "./trusted-proxies";

const NO_PEER = "in-process";

describe("parseTrustProxy", () => {
  test("unset, false and 0 are off; true (the old boolean) is one hop; a number is that many hops", () => {
    for (const v of [null, "false", "FALSE", "no", "off", "0", "00"]) expect(parseTrustProxy(v)).toEqual({ mode: "off" });
    for (const v of ["true", "TRUE", "yes", "on", "1"]) expect(parseTrustProxy(v)).toEqual({ mode: "hops", hops: 1 });
    expect(parseTrustProxy("3")).toEqual({ mode: "hops", hops: 3 });
    expect(parseTrustProxy("32")).toEqual({ mode: "hops", hops: 32 });
  });

  test("a list of addresses and CIDRs, IPv4 and IPv6, normalized to address/prefix", () => {
    expect(parseTrustProxy("10.0.0.0/8, 192.0.2.7,2001:DB8::/32 , ::1, ::ffff:198.51.100.1")).toEqual({
      mode: "cidrs",
      cidrs: ["10.0.0.0/8", "192.0.2.7/32", "2001:db8::/32", "::1/128", "198.51.100.1/32"],
    });
  });

  test("anything else is refused with the reason", () => {
    for (const v of ["maybe", "33", "10.0.0.0/33", "::/129", "10.0.0.0/", "10.0.0/8", "10.0.0.0/8,", "proxy.internal", "fe80::1%eth0", "10.0.0.0/-1", "1.2.3.4/8/9"]) {
      expect(() => parseTrustProxy(v)).toThrow(TrustProxyParseError);
    }
  });
});

describe("forwardedAddress", () => {
  test("accepts addresses as proxies write them, with or without a port", () => {
    expect(forwardedAddress(" 203.0.113.9 ")).toBe("203.0.113.9");
    expect(forwardedAddress("203.0.113.9:5123")).toBe("203.0.113.9");
    expect(forwardedAddress("2001:DB8::1")).toBe("2001:db8::1");
    expect(forwardedAddress("[2001:db8::1]")).toBe("2001:db8::1");
    expect(forwardedAddress("[2001:db8::1]:443")).toBe("2001:db8::1");
    expect(forwardedAddress("::ffff:203.0.113.9")).toBe("203.0.113.9");
  });

  test("anything malformed is null", () => {
    for (const v of ["", "unknown", "evil.example", "1.2.3", "1.2.3.4.5", "256.1.1.1", "[::1", "[::1]x", "1.2.3.4:http", "<script>", "1.2.3.4 5.6.7.8", "fe80::1%eth0"]) {
      expect(forwardedAddress(v)).toBeNull();
    }
  });
});

describe("clientAddressResolver", () => {
  const resolver = (raw: string | null) => clientAddressResolver(parseTrustProxy(raw), NO_PEER);

  test("off: the socket address, whatever X-Forwarded-For says", () => {
    const r = resolver(null);
    expect(r("203.0.113.9", "198.51.100.7")).toBe("198.51.100.7");
    expect(r(null, null)).toBe(NO_PEER);
    expect(r("203.0.113.9", null)).toBe(NO_PEER);
  });

  test("one hop (true): the right-most entry, the one the proxy appended; fake entries to its left are ignored", () => {
    const r = resolver("true");
    expect(r("203.0.113.9", "10.0.0.2")).toBe("203.0.113.9");
    for (const fake of ["1.1.1.1", "2.2.2.2", "victim.example", "198.51.100.1, 198.51.100.2"]) {
      expect(r(`${fake}, 203.0.113.9`, "10.0.0.2")).toBe("203.0.113.9");
    }
    // No header: the proxy itself is the client.
    expect(r(null, "10.0.0.2")).toBe("10.0.0.2");
  });

  test("N hops: the N-th entry from the right (the socket peer is hop 1)", () => {
    // client 203.0.113.5 → CDN edge 198.51.100.20 → load balancer 10.0.0.2 → Keyward.
    // The edge appended 203.0.113.5, the load balancer appended 198.51.100.20.
    const r = resolver("2");
    expect(r("6.6.6.6, 203.0.113.5, 198.51.100.20", "10.0.0.2")).toBe("203.0.113.5");
    expect(r("203.0.113.5, 198.51.100.20", "10.0.0.2")).toBe("203.0.113.5");
    // Fewer entries than hops: the left-most is the furthest address a trusted proxy wrote.
    expect(r("198.51.100.20", "10.0.0.2")).toBe("198.51.100.20");
  });

  test("a malformed entry is never the client: the address of the hop that wrote it is used", () => {
    expect(resolver("1")("1.1.1.1, garbage", "10.0.0.2")).toBe("10.0.0.2");
    expect(resolver("2")("1.1.1.1, garbage, 198.51.100.20", "10.0.0.2")).toBe("198.51.100.20");
    expect(resolver("2")("garbage, 198.51.100.20", "10.0.0.2")).toBe("198.51.100.20");
    expect(resolver("1")("", "10.0.0.2")).toBe("10.0.0.2");
  });

  test("CIDRs: read only when the socket peer is a trusted proxy, then from the right past trusted addresses", () => {
    const r = resolver("10.0.0.0/8, 2001:db8:1::/48, 198.51.100.20");
    // An untrusted peer is the client, whatever it claims.
    expect(r("203.0.113.5", "192.0.2.44")).toBe("192.0.2.44");
    expect(r("203.0.113.5", "2001:db8:2::1")).toBe("2001:db8:2::1");
    // Trusted peer: walk left over trusted hops to the first untrusted address.
    expect(r("6.6.6.6, 203.0.113.5, 198.51.100.20, 10.1.2.3", "10.0.0.2")).toBe("203.0.113.5");
    expect(r("6.6.6.6, 2001:db8:99::7", "2001:db8:1::5")).toBe("2001:db8:99::7");
    expect(r("[2001:db8:99::7]:5555", "::ffff:10.0.0.2")).toBe("2001:db8:99::7");
    // No header, or only proxies: the furthest known hop.
    expect(r(null, "10.0.0.2")).toBe("10.0.0.2");
    expect(r("10.9.9.9, 10.1.1.1", "10.0.0.2")).toBe("10.9.9.9");
    // Malformed where the client would be: the proxy that wrote it.
    expect(r("203.0.113.5, nonsense, 10.1.1.1", "10.0.0.2")).toBe("10.1.1.1");
    // In-process requests have no peer to trust.
    expect(r("203.0.113.5", null)).toBe(NO_PEER);
  });
});
