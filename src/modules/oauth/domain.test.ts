import { describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import {
  clearFlowCookie,
  cookieValue,
  emailFromClaims,
  emailFromGitHubList,
  flowCookieScope,
  safeReturnTo,
  setFlowCookie,
} from "./domain";
import { openFlow, sealFlow, type Flow } from "./flow";

describe("safeReturnTo: only paths on this site", () => {
  test("unset or empty means /", () => {
    expect(safeReturnTo(undefined)).toBe("/");
    expect(safeReturnTo("")).toBe("/");
  });

  test.each(["/", "/portal", "/portal/licenses?tab=seats#top", "/a/b%2Fc", "/~me/x.y-z_1"])("%p is kept as is", (p) => {
    expect(safeReturnTo(p)).toBe(p);
  });

  test.each([
    "//evil.example",
    "//evil.example/path",
    "/\\evil.example",
    "\\\\evil.example",
    "/\t/evil.example",
    "/\n/evil.example",
    "/ /evil.example",
    "https://evil.example/",
    "http:evil.example",
    "javascript:alert(1)",
    "evil.example",
    "portal",
    "?x=1",
  ])("%p is refused", (p) => {
    expect(safeReturnTo(p)).toBeNull();
  });

  test("a path longer than 2048 characters is refused", () => {
    expect(safeReturnTo("/" + "a".repeat(2047))).not.toBeNull();
    expect(safeReturnTo("/" + "a".repeat(2048))).toBeNull();
  });
});

describe("cookies", () => {
  test("cookieValue finds one cookie among several", () => {
    expect(cookieValue("a=1; oauth_flow=v1.x.y; b=2", "oauth_flow")).toBe("v1.x.y");
    expect(cookieValue("oauth_flowx=1", "oauth_flow")).toBeNull();
    expect(cookieValue(null, "oauth_flow")).toBeNull();
  });

  test("the flow cookie is HttpOnly, SameSite=Lax, 10 minutes, scoped to the OAuth routes; Secure only on https", () => {
    const http = flowCookieScope("http://127.0.0.1:8080");
    expect(setFlowCookie("SEALED", http)).toBe("oauth_flow=SEALED; Path=/api/v1/auth/oauth; Max-Age=600; HttpOnly; SameSite=Lax");
    const https = flowCookieScope("https://licenses.example.com/keyward");
    expect(setFlowCookie("SEALED", https)).toBe("oauth_flow=SEALED; Path=/keyward/api/v1/auth/oauth; Max-Age=600; HttpOnly; SameSite=Lax; Secure");
    expect(clearFlowCookie(https)).toBe("oauth_flow=; Path=/keyward/api/v1/auth/oauth; Max-Age=0; HttpOnly; SameSite=Lax; Secure");
  });
});

describe("verified email only", () => {
  test("OpenID Connect claims: email_verified must be true (or the string \"true\")", () => {
    expect(emailFromClaims({ email: "a@example.com", email_verified: true })).toEqual({ email: "a@example.com" });
    expect(emailFromClaims({ email: "a@example.com", email_verified: "true" })).toEqual({ email: "a@example.com" });
    for (const v of [false, "false", undefined, null, 1, "yes"]) {
      expect(emailFromClaims({ email: "a@example.com", email_verified: v })).toEqual({ refused: "unverified" });
    }
    expect(emailFromClaims({ email_verified: true })).toEqual({ refused: "missing" });
    expect(emailFromClaims({ email: "not an address", email_verified: true })).toEqual({ refused: "missing" });
  });

  test("GitHub: the primary address, only when verified; another verified address does not stand in", () => {
    const e = (email: string, primary: boolean, verified: boolean) => ({ email, primary, verified, visibility: null });
    expect(emailFromGitHubList([e("old@example.com", false, true), e("me@example.com", true, true)])).toEqual({ email: "me@example.com" });
    expect(emailFromGitHubList([e("other@example.com", false, true), e("me@example.com", true, false)])).toEqual({ refused: "unverified" });
    expect(emailFromGitHubList([e("other@example.com", false, true)])).toEqual({ refused: "missing" });
    expect(emailFromGitHubList([])).toEqual({ refused: "missing" });
    expect(emailFromGitHubList({ message: "Bad credentials" })).toEqual({ refused: "missing" });
  });
});

describe("sealed flow", () => {
  const key = new Uint8Array(randomBytes(32));
  const flow: Flow = { provider: "github", state: "st", codeVerifier: "ver", returnTo: "/portal", expiresAtMs: 1_000 };

  test("round-trips, and the sealed text shows neither the verifier nor the return path", () => {
    const sealed = sealFlow(key, flow);
    expect(openFlow(key, sealed)).toEqual(flow);
    expect(sealed).not.toContain("ver");
    expect(sealed).not.toContain("portal");
  });

  test("a changed byte, another key or garbage does not open", () => {
    const sealed = sealFlow(key, flow);
    const last = sealed.at(-2) === "A" ? "B" : "A";
    expect(openFlow(key, sealed.slice(0, -2) + last + sealed.at(-1))).toBeNull();
    expect(openFlow(new Uint8Array(randomBytes(32)), sealed)).toBeNull();
    expect(openFlow(key, "v1.garbage.garbage")).toBeNull();
    expect(openFlow(key, "")).toBeNull();
  });
});
