// OAuth / OpenID Connect sign-in end to end (issue 10 point 2; docs/sign-in.md): the real app against a
// local fake authorization server (test/support/fake-oauth.ts) that speaks OAuth 2.0, PKCE, OIDC
// discovery and userinfo, and GitHub's endpoints. The browser is played by hand: start → follow the
// 302 to the fake's /authorize → follow its 302 back to the callback with the flow cookie.
import { afterAll, describe, expect, test } from "bun:test";
import { createTestApp, type TestApp, type TestResponse } from "../../support/app";
import { s256, startFakeOAuth, type FakeOAuth, type FakeUser } from "../../support/fake-oauth";

const BASE = "http://keyward.test";
const PROVIDERS = ["github", "google", "oidc"] as const;
type Provider = (typeof PROVIDERS)[number];

function providerEnv(fake: FakeOAuth): Record<string, string> {
  return {
    BASE_URL: BASE,
    OAUTH_GITHUB_CLIENT_ID: "gh-client",
    OAUTH_GITHUB_CLIENT_SECRET: "gh-secret",
    OAUTH_GITHUB_URL: fake.url,
    OAUTH_GITHUB_API_URL: fake.url,
    OAUTH_GOOGLE_CLIENT_ID: "google-client",
    OAUTH_GOOGLE_CLIENT_SECRET: "google-secret",
    OAUTH_GOOGLE_AUTH_URL: `${fake.url}/authorize`,
    OAUTH_GOOGLE_TOKEN_URL: `${fake.url}/token`,
    OAUTH_GOOGLE_USERINFO_URL: `${fake.url}/userinfo`,
    OIDC_ISSUER: fake.url,
    OIDC_CLIENT_ID: "oidc-client",
    OIDC_CLIENT_SECRET: "oidc-secret",
    OIDC_NAME: "Acme SSO",
  };
}

function registerClients(fake: FakeOAuth) {
  fake.addClient({ id: "gh-client", secret: "gh-secret", redirectUri: `${BASE}/api/v1/auth/oauth/github/callback` });
  fake.addClient({ id: "google-client", secret: "google-secret", redirectUri: `${BASE}/api/v1/auth/oauth/google/callback` });
  fake.addClient({ id: "oidc-client", secret: "oidc-secret", redirectUri: `${BASE}/api/v1/auth/oauth/oidc/callback` });
}

const fake = await startFakeOAuth();
registerClients(fake);
const t = await createTestApp({ env: providerEnv(fake), label: "oauth" });
afterAll(async () => {
  await t.close();
  await fake.close();
});

/** `name=value` of the Set-Cookie headers, by name; `attrs` keeps the whole header. */
function cookies(res: TestResponse): Map<string, { value: string; attrs: string }> {
  const out = new Map<string, { value: string; attrs: string }>();
  for (const h of res.headers.getSetCookie()) {
    const [pair] = h.split(";");
    const eq = pair!.indexOf("=");
    out.set(pair!.slice(0, eq), { value: pair!.slice(eq + 1), attrs: h });
  }
  return out;
}

interface Started {
  res: TestResponse;
  /** `oauth_flow=…` for the Cookie header. */
  flowCookie: string;
  authorizeUrl: URL;
}

async function start(app: TestApp, provider: string, returnTo?: string): Promise<Started> {
  const q = returnTo === undefined ? "" : `?return_to=${encodeURIComponent(returnTo)}`;
  const res = await app.request("GET", `/api/v1/auth/oauth/${provider}/start${q}`);
  expect({ status: res.status, body: res.status === 302 ? null : res.body }).toEqual({ status: 302, body: null });
  const flow = cookies(res).get("oauth_flow")!;
  return { res, flowCookie: `oauth_flow=${flow.value}`, authorizeUrl: new URL(res.headers.get("location")!) };
}

/** The fake approves (or refuses) and redirects back: the callback's path and query under BASE_URL. */
async function authorize(url: URL): Promise<string> {
  const res = await fetch(url, { redirect: "manual" });
  expect(res.status).toBe(302);
  const back = new URL(res.headers.get("location")!);
  expect(back.origin).toBe(BASE);
  return back.pathname + back.search;
}

async function callback(app: TestApp, pathAndQuery: string, cookie: string | null): Promise<TestResponse> {
  return app.request("GET", pathAndQuery, { headers: cookie ? { cookie } : {} });
}

async function signInVia(provider: Provider, user: FakeUser, returnTo?: string) {
  fake.user = user;
  const s = await start(t, provider, returnTo);
  const back = await authorize(s.authorizeUrl);
  return { started: s, res: await callback(t, back, s.flowCookie) };
}

/** The user and sign-in method of the session a cookie names, as GET /auth/me reports them (null when signed out). */
async function whoIs(sessionCookie: string): Promise<{ email: string; method: string } | null> {
  const me = await t.request("GET", "/api/v1/auth/me", { headers: { cookie: sessionCookie } });
  if (me.status === 401) return null;
  expect(me.status).toBe(200);
  return { email: me.body.data.user.email, method: me.body.data.session.method };
}

function expectRefused(res: TestResponse, status: number, code: string) {
  expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });
  expect(res.headers.get("location")).toBeNull();
  expect([...cookies(res).keys()]).not.toContain("session");
}

const verified = (email: string, sub = email): FakeUser => ({ sub, email, emailVerified: true });

describe("GET /auth/providers", () => {
  test("lists the enabled providers with their names and start URLs", async () => {
    const res = await t.request("GET", "/api/v1/auth/providers");
    expect(res.status).toBe(200);
    expect(res.body.data.providers).toEqual([
      { id: "github", name: "GitHub", start_url: `${BASE}/api/v1/auth/oauth/github/start` },
      { id: "google", name: "Google", start_url: `${BASE}/api/v1/auth/oauth/google/start` },
      { id: "oidc", name: "Acme SSO", start_url: `${BASE}/api/v1/auth/oauth/oidc/start` },
    ]);
  });
});

describe("start", () => {
  for (const provider of PROVIDERS) {
    test(`${provider}: 302 to the provider with state, an S256 PKCE challenge and the callback; a sealed 10-minute HttpOnly Lax cookie`, async () => {
      const { res, authorizeUrl } = await start(t, provider, "/portal");
      const q = authorizeUrl.searchParams;
      expect(authorizeUrl.origin).toBe(fake.url);
      expect(q.get("response_type")).toBe("code");
      expect(q.get("redirect_uri")).toBe(`${BASE}/api/v1/auth/oauth/${provider}/callback`);
      expect(q.get("state")).toMatch(/^[A-Za-z0-9_-]{20,}$/);
      expect(q.get("code_challenge_method")).toBe("S256");
      expect(q.get("code_challenge")).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(res.headers.get("cache-control")).toBe("no-store");
      const flow = cookies(res).get("oauth_flow")!;
      expect(flow.attrs).toMatch(/; Path=\/api\/v1\/auth\/oauth; Max-Age=600; HttpOnly; SameSite=Lax$/);
      // Sealed: neither the state nor the return path can be read from it.
      expect(flow.value).not.toContain(q.get("state")!);
      expect(flow.value).not.toContain("portal");
    });
  }

  test("two starts get different states and challenges", async () => {
    const a = (await start(t, "github")).authorizeUrl.searchParams;
    const b = (await start(t, "github")).authorizeUrl.searchParams;
    expect(a.get("state")).not.toBe(b.get("state"));
    expect(a.get("code_challenge")).not.toBe(b.get("code_challenge"));
  });

  test("an unknown provider is 404", async () => {
    for (const p of ["twitter", "GitHub", "x".repeat(64)]) {
      const res = await t.request("GET", `/api/v1/auth/oauth/${p}/start`);
      expect({ p, status: res.status, code: res.body.error.code }).toEqual({ p, status: 404, code: "NOT_FOUND" });
      const cb = await t.request("GET", `/api/v1/auth/oauth/${p}/callback?code=x&state=y`);
      expect({ p, status: cb.status }).toEqual({ p, status: 404 });
    }
  });

  describe("return_to: open redirects are refused", () => {
    for (const evil of ["//evil.example", "//evil.example/portal", "/\\evil.example", "https://evil.example/", "javascript:alert(1)", "evil.example", "/\t/evil.example"]) {
      test(`${JSON.stringify(evil)} → 400 VALIDATION_ERROR, no cookie, no redirect`, async () => {
        const res = await t.request("GET", `/api/v1/auth/oauth/github/start?return_to=${encodeURIComponent(evil)}`);
        expectRefused(res, 400, "VALIDATION_ERROR");
        expect(Object.keys(res.body.error.details.fields)).toEqual(["return_to"]);
        expect(res.headers.getSetCookie()).toEqual([]);
      });
    }
  });
});

describe("a full sign-in", () => {
  test("GitHub: the primary verified address from /user/emails; lands on return_to with a session", async () => {
    fake.user = {
      sub: "octocat",
      email: null,
      githubEmails: [
        { email: "old@example.com", primary: false, verified: true, visibility: null },
        { email: "Octo@Example.com", primary: true, verified: true, visibility: "private" },
      ],
    };
    const s = await start(t, "github", "/portal/licenses?tab=seats");
    const before = fake.tokenRequests.length;
    const res = await callback(t, await authorize(s.authorizeUrl), s.flowCookie);
    expect(res.status).toBe(302);
    expect(res.headers.get("location")).toBe("/portal/licenses?tab=seats");
    const set = cookies(res);
    expect(set.get("session")?.value).toBeTruthy();
    // The flow cookie is cleared.
    expect(set.get("oauth_flow")?.attrs).toMatch(/^oauth_flow=; Path=\/api\/v1\/auth\/oauth; Max-Age=0;/);
    // The code went to the fake's GitHub token endpoint with the verifier matching the challenge.
    const tokenReq = fake.tokenRequests.slice(before);
    expect(tokenReq.map((r) => ({ path: r.path, outcome: r.outcome }))).toEqual([{ path: "/login/oauth/access_token", outcome: "ok" }]);
    expect(s256(tokenReq[0]!.codeVerifier!)).toBe(s.authorizeUrl.searchParams.get("code_challenge")!);
    // Users are keyed by the lower-cased address.
    expect(await whoIs(`session=${set.get("session")!.value}`)).toEqual({ email: "octo@example.com", method: "oauth:github" });
  });

  test("Google: email_verified from userinfo; return_to defaults to /", async () => {
    const { res } = await signInVia("google", verified("g.user@example.com"));
    expect(res.status).toBe(302);
    expect(res.headers.get("location")).toBe("/");
    expect(await whoIs(`session=${cookies(res).get("session")!.value}`)).toEqual({ email: "g.user@example.com", method: "oauth:google" });
  });

  test("OpenID Connect: endpoints from discovery (fetched once, then cached)", async () => {
    const first = await signInVia("oidc", verified("sso.user@example.com"));
    expect(first.res.status).toBe(302);
    expect(await whoIs(`session=${cookies(first.res).get("session")!.value}`)).toEqual({ email: "sso.user@example.com", method: "oauth:oidc" });
    const fetches = fake.discoveryFetches;
    expect(fetches).toBeGreaterThanOrEqual(1);
    const second = await signInVia("oidc", verified("sso.other@example.com"));
    expect(second.res.status).toBe(302);
    expect(await whoIs(`session=${cookies(second.res).get("session")!.value}`)).toEqual({ email: "sso.other@example.com", method: "oauth:oidc" });
    expect(fake.discoveryFetches).toBe(fetches);
  });

  test("the email string \"true\" counts as verified (AWS Cognito sends it so)", async () => {
    const { res } = await signInVia("oidc", { sub: "c", email: "cognito@example.com", emailVerified: "true" });
    expect(res.status).toBe(302);
  });
});

describe("state: the callback must belong to a flow this browser started", () => {
  test("a state that differs from the cookie's → 400 OAUTH_STATE_MISMATCH, and the code is never spent", async () => {
    fake.user = verified("victim@example.com");
    const s = await start(t, "github");
    const back = new URL(await authorize(s.authorizeUrl), BASE);
    back.searchParams.set("state", "attacker-chosen-state-value");
    const before = fake.tokenRequests.length;
    expectRefused(await callback(t, back.pathname + back.search, s.flowCookie), 400, "OAUTH_STATE_MISMATCH");
    expect(fake.tokenRequests.length).toBe(before);
  });

  test("no state, no flow cookie, a forged cookie, or another provider's flow → 400 OAUTH_STATE_MISMATCH", async () => {
    fake.user = verified("victim@example.com");
    const s = await start(t, "google");
    const back = new URL(await authorize(s.authorizeUrl), BASE);
    const noState = new URL(back);
    noState.searchParams.delete("state");
    expectRefused(await callback(t, noState.pathname + noState.search, s.flowCookie), 400, "OAUTH_STATE_MISMATCH");
    expectRefused(await callback(t, back.pathname + back.search, null), 400, "OAUTH_STATE_MISMATCH");
    const forged = s.flowCookie.slice(0, -3) + (s.flowCookie.at(-3) === "A" ? "B" : "A") + s.flowCookie.slice(-2);
    expectRefused(await callback(t, back.pathname + back.search, forged), 400, "OAUTH_STATE_MISMATCH");
    // The Google flow's cookie and state, presented to the GitHub callback.
    expectRefused(await callback(t, back.pathname.replace("/google/", "/github/") + back.search, s.flowCookie), 400, "OAUTH_STATE_MISMATCH");
    // The untouched callback still works: none of the above spent anything.
    expect((await callback(t, back.pathname + back.search, s.flowCookie)).status).toBe(302);
  });

  test("a flow older than 10 minutes → 400 OAUTH_STATE_MISMATCH", async () => {
    fake.user = verified("slow@example.com");
    const s = await start(t, "oidc");
    const back = await authorize(s.authorizeUrl);
    t.clock.advance(10 * 60 * 1000);
    try {
      expectRefused(await callback(t, back, s.flowCookie), 400, "OAUTH_STATE_MISMATCH");
    } finally {
      t.clock.advance(-10 * 60 * 1000);
    }
  });
});

describe("PKCE: the code is only good with the verifier of the flow that asked for it", () => {
  test("an authorization code injected into another flow (its state and cookie) → 400 OAUTH_FAILED: the fake refuses the verifier", async () => {
    // The attacker's own flow yields a code bound to the attacker's challenge...
    fake.user = verified("attacker@example.com");
    const attacker = await start(t, "oidc");
    const attackerCode = new URL(await authorize(attacker.authorizeUrl), BASE).searchParams.get("code")!;
    // ...which the attacker plants in the victim's callback (the victim's state and cookie are valid).
    fake.user = verified("victim@example.com");
    const victim = await start(t, "oidc");
    const back = new URL(await authorize(victim.authorizeUrl), BASE);
    back.searchParams.set("code", attackerCode);
    const before = fake.tokenRequests.length;
    const res = await callback(t, back.pathname + back.search, victim.flowCookie);
    expectRefused(res, 400, "OAUTH_FAILED");
    expect(res.body.error.details).toEqual({ reason: "token" });
    const seen = fake.tokenRequests.slice(before);
    expect(seen.map((r) => r.outcome)).toEqual(["invalid_grant"]);
    // The fake saw the victim flow's verifier, which does not match the attacker code's challenge.
    expect(s256(seen[0]!.codeVerifier!)).toBe(victim.authorizeUrl.searchParams.get("code_challenge")!);
    expect(s256(seen[0]!.codeVerifier!)).not.toBe(attacker.authorizeUrl.searchParams.get("code_challenge")!);
  });

  test("the same on GitHub, whose token endpoint reports errors with status 200", async () => {
    fake.user = verified("attacker@example.com");
    const attacker = await start(t, "github");
    const attackerCode = new URL(await authorize(attacker.authorizeUrl), BASE).searchParams.get("code")!;
    fake.user = verified("victim@example.com");
    const victim = await start(t, "github");
    const back = new URL(await authorize(victim.authorizeUrl), BASE);
    back.searchParams.set("code", attackerCode);
    expectRefused(await callback(t, back.pathname + back.search, victim.flowCookie), 400, "OAUTH_FAILED");
  });

  test("the fake itself refuses a wrong verifier and accepts the right one (the check above can fail)", async () => {
    const verifier = "v".repeat(43);
    const authorizeWith = async (challenge: string) => {
      const url = new URL(`${fake.url}/authorize`);
      for (const [k, v] of Object.entries({ response_type: "code", client_id: "oidc-client", redirect_uri: `${BASE}/api/v1/auth/oauth/oidc/callback`, state: "s", code_challenge: challenge, code_challenge_method: "S256" })) {
        url.searchParams.set(k, v);
      }
      return new URL((await fetch(url, { redirect: "manual" })).headers.get("location")!).searchParams.get("code")!;
    };
    const exchange = (code: string, codeVerifier: string) =>
      fetch(`${fake.url}/token`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", authorization: `Basic ${btoa("oidc-client:oidc-secret")}` },
        body: new URLSearchParams({ grant_type: "authorization_code", code, redirect_uri: `${BASE}/api/v1/auth/oauth/oidc/callback`, code_verifier: codeVerifier }),
      });
    const wrong = await exchange(await authorizeWith(s256(verifier)), "w".repeat(43));
    expect({ status: wrong.status, body: await wrong.json() }).toEqual({ status: 400, body: { error: "invalid_grant" } });
    const right = await exchange(await authorizeWith(s256(verifier)), verifier);
    expect(right.status).toBe(200);
  });
});

describe("the email must be verified by the provider", () => {
  const cases: { name: string; provider: Provider; user: FakeUser; reason: string }[] = [
    { name: "OIDC email_verified false", provider: "oidc", user: { sub: "u1", email: "u1@example.com", emailVerified: false }, reason: "unverified" },
    { name: "OIDC without email_verified", provider: "oidc", user: { sub: "u2", email: "u2@example.com" }, reason: "unverified" },
    { name: "OIDC without an email", provider: "oidc", user: { sub: "u3", email: null, emailVerified: true }, reason: "missing" },
    { name: "Google email_verified \"false\"", provider: "google", user: { sub: "u4", email: "u4@example.com", emailVerified: "false" }, reason: "unverified" },
    {
      name: "GitHub primary unverified (another verified address does not stand in)",
      provider: "github",
      user: {
        sub: "u5",
        email: null,
        githubEmails: [
          { email: "u5-primary@example.com", primary: true, verified: false, visibility: null },
          { email: "u5-other@example.com", primary: false, verified: true, visibility: null },
        ],
      },
      reason: "unverified",
    },
    { name: "GitHub with no addresses", provider: "github", user: { sub: "u6", email: null, githubEmails: [] }, reason: "missing" },
  ];
  for (const c of cases) {
    test(`${c.name} → 403 OAUTH_EMAIL_UNVERIFIED, no session, no user`, async () => {
      const { res } = await signInVia(c.provider, c.user);
      expectRefused(res, 403, "OAUTH_EMAIL_UNVERIFIED");
      expect(res.body.error.details).toEqual({ reason: c.reason });
      const addresses = [c.user.email, ...(c.user.githubEmails ?? []).map((e) => e.email)].filter((e): e is string => e !== null);
      for (const email of addresses) expect({ email, user: await t.deps.repos.users.findByEmail(email) }).toEqual({ email, user: null });
    });
  }
});

describe("other provider failures are 4xx, never a session", () => {
  test("the user declines at the provider (?error=access_denied) → 400 OAUTH_FAILED naming the error", async () => {
    fake.denyNext = "access_denied";
    const s = await start(t, "google");
    const res = await callback(t, await authorize(s.authorizeUrl), s.flowCookie);
    expectRefused(res, 400, "OAUTH_FAILED");
    expect(res.body.error.details).toEqual({ reason: "provider_error", error: "access_denied" });
    // The failed callback ends the flow: the browser drops its cookie.
    expect(cookies(res).get("oauth_flow")).toMatchObject({ value: "" });
    expect(cookies(res).get("oauth_flow")!.attrs).toContain("Max-Age=0");
  });

  test("a callback without this browser's flow → 400 OAUTH_STATE_MISMATCH, and the flow cookie is cleared", async () => {
    const s = await start(t, "google");
    const back = new URL(await authorize(s.authorizeUrl), "http://x");
    back.searchParams.set("state", "forged-state-value");
    const res = await callback(t, back.pathname + back.search, s.flowCookie);
    expectRefused(res, 400, "OAUTH_STATE_MISMATCH");
    expect(cookies(res).get("oauth_flow")!.attrs).toContain("Max-Age=0");
  });

  test("a replayed callback (the code is spent) → 400 OAUTH_FAILED", async () => {
    fake.user = verified("once@example.com");
    const s = await start(t, "oidc");
    const back = await authorize(s.authorizeUrl);
    expect((await callback(t, back, s.flowCookie)).status).toBe(302);
    expectRefused(await callback(t, back, s.flowCookie), 400, "OAUTH_FAILED");
  });

  test("a callback without a code → 400 OAUTH_FAILED", async () => {
    fake.user = verified("nocode@example.com");
    const s = await start(t, "github");
    const back = new URL(await authorize(s.authorizeUrl), BASE);
    back.searchParams.delete("code");
    expectRefused(await callback(t, back.pathname + back.search, s.flowCookie), 400, "OAUTH_FAILED");
  });
});

// Its own fake and app: these tests change discovery and timing.
const slowFake = await startFakeOAuth();
registerClients(slowFake);
const app = await createTestApp({ env: { ...providerEnv(slowFake), OAUTH_HTTP_TIMEOUT_MS: "300" }, label: "oauth-slow" });
afterAll(async () => {
  await app.close();
  await slowFake.close();
});

describe("a provider that is down, slow or misconfigured", () => {

  test("a token endpoint that never answers → 400 OAUTH_FAILED once the time limit passes", async () => {
    slowFake.user = verified("slow@example.com");
    const s = await start(app, "google");
    const back = await authorize(s.authorizeUrl);
    slowFake.hangToken = true;
    try {
      expectRefused(await callback(app, back, s.flowCookie), 400, "OAUTH_FAILED");
    } finally {
      slowFake.hangToken = false;
    }
  });

  test("RFC 9207: an `iss` naming another issuer → 400 OAUTH_FAILED (issuer_mismatch); the right one passes", async () => {
    slowFake.user = verified("iss@example.com");
    slowFake.issInResponse = true;
    try {
      const s = await start(app, "oidc");
      const back = new URL(await authorize(s.authorizeUrl), BASE);
      expect(back.searchParams.get("iss")).toBe(slowFake.url);
      const mixedUp = new URL(back);
      mixedUp.searchParams.set("iss", "https://other-idp.example");
      const res = await callback(app, mixedUp.pathname + mixedUp.search, s.flowCookie);
      expectRefused(res, 400, "OAUTH_FAILED");
      expect(res.body.error.details).toEqual({ reason: "issuer_mismatch" });
      expect((await callback(app, back.pathname + back.search, s.flowCookie)).status).toBe(302);
    } finally {
      slowFake.issInResponse = false;
    }
  });

  test("a discovery document for another issuer or without a userinfo endpoint → start answers 400 OAUTH_FAILED (discovery), nothing cached", async () => {
    const other = await startFakeOAuth();
    const wrongIssuer = await createTestApp({ env: { ...providerEnv(other), OIDC_ISSUER: other.url }, label: "oauth-issuer" });
    try {
      other.discoveryIssuer = "https://impostor.example";
      const res = await wrongIssuer.request("GET", "/api/v1/auth/oauth/oidc/start");
      expectRefused(res, 400, "OAUTH_FAILED");
      expect(res.body.error.details).toEqual({ reason: "discovery" });
      other.discoveryIssuer = null;
      // No userinfo endpoint, or an unparseable one: Keyward could not learn the email.
      for (const userinfo of [undefined, "not a url"]) {
        other.discoveryOverrides = { userinfo_endpoint: userinfo };
        const bad = await wrongIssuer.request("GET", "/api/v1/auth/oauth/oidc/start");
        expectRefused(bad, 400, "OAUTH_FAILED");
        expect(bad.body.error.details).toEqual({ reason: "discovery" });
      }
      other.discoveryOverrides = {};
      expect((await wrongIssuer.request("GET", "/api/v1/auth/oauth/oidc/start")).status).toBe(302);
    } finally {
      await wrongIssuer.close();
      await other.close();
    }
  });
});

describe("providers that are not configured", () => {
  test("none configured: an empty list, and every start and callback is 404", async () => {
    const bare = await createTestApp({ label: "oauth-off" });
    try {
      expect((await bare.request("GET", "/api/v1/auth/providers")).body.data).toEqual({ providers: [] });
      for (const p of PROVIDERS) {
        expect((await bare.request("GET", `/api/v1/auth/oauth/${p}/start`)).status).toBe(404);
        expect((await bare.request("GET", `/api/v1/auth/oauth/${p}/callback?code=a&state=b`)).status).toBe(404);
      }
    } finally {
      await bare.close();
    }
  });
});
