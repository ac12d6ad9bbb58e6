import { describe, expect, test } from "bun:test";
import { clientIp, NO_PEER, pathOf } from "./request-context";
import { clientAddressResolver, parseTrustProxy } from "./trusted-proxies";

describe("pathOf", () => {
  test("matches URL#pathname for the request URLs a server sees", () => {
    for (const u of [
      "http://localhost/api/v1/license/verify",
      "http://127.0.0.1:8080/api/v1/releases/app/feed.xml?platform=linux-x64&limit=5",
      "https://licenses.example.com/",
      "http://[::1]:8080/api/v1/health?x=/y",
      "http://localhost",
    ]) {
      expect(pathOf(u)).toBe(new URL(u).pathname);
    }
  });
});

describe("clientIp", () => {
  const server = { requestIP: () => ({ address: "198.51.100.7" }) };
  const req = (xff?: string) => new Request("http://localhost/", { headers: xff ? { "x-forwarded-for": xff } : {} });

  test("the socket address, unless a trusted proxy names the client (the entry it appended: right-most)", () => {
    expect(clientIp(req("203.0.113.9"), server, clientAddressResolver(parseTrustProxy(null), NO_PEER))).toBe("198.51.100.7");
    const oneHop = clientAddressResolver(parseTrustProxy("true"), NO_PEER);
    expect(clientIp(req("10.0.0.1, 203.0.113.9"), server, oneHop)).toBe("203.0.113.9");
    expect(clientIp(req(), server, oneHop)).toBe("198.51.100.7");
  });

  test("no server (in-process requests) is named as such, never as a real address", () => {
    expect(clientIp(req(), null, clientAddressResolver(parseTrustProxy(null), NO_PEER))).toBe(NO_PEER);
  });
});
