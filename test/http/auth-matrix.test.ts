// The admin auth matrix over the app's route table (spec: Authentication, API key rules 1-3).
// Every /api/v1/admin/ route must have a fixture (test/support/route-fixtures/*.ts); each route is
// then called by every kind of caller, with fresh resources per case:
//   no credential                          → 401 UNAUTHORIZED (also with a malformed request)
//   key with no scopes                     → 403 INSUFFICIENT_SCOPE (fail-closed)
//   each non-admin scope the route refuses → 403 INSUFFICIENT_SCOPE
//   each non-admin scope it accepts        → neither 401/403 nor 5xx
//   admin key bound to another product     → 403 PRODUCT_SCOPE_MISMATCH
//     (system-wide routes: any bound key   → 403 PRODUCT_SCOPE_MISMATCH)
//   admin key bound to the same product    → 2xx (product-scoped routes)
//   unbound admin key                      → 2xx
//   admin session                          → 2xx
//   support / viewer session               → accepted iff its role's scopes meet the route's
//   signed-in user without a role          → 403 INSUFFICIENT_SCOPE
import { afterAll, describe, expect, test } from "bun:test";
import { createTestApp, type TestResponse } from "../support/app";
import { startFakeStripe } from "../support/fake-stripe";
import { adminRoutes, buildRequest, freshContext, loadRouteFixtures } from "../support/route-fixtures";
import type { RouteFixtureContext } from "../support/route-fixtures/types";
import { makeProduct } from "../support/factories";
import { acceptedScopes, SCOPES, type Scope } from "../../src/shared/actor";
import { ROLE_SCOPES } from "../../src/modules/users/domain";
import type { AdminRole } from "../../src/modules/users/repo";

// Stripe points at a local fake: the refund and metered-sync routes need it to answer 2xx.
const stripe = await startFakeStripe();
const t = await createTestApp({ env: stripe.env() });
afterAll(async () => {
  await t.close();
  await stripe.stop();
});

const fixtures = await loadRouteFixtures();
const routes = adminRoutes(await t.app.routes());
const NON_ADMIN = SCOPES.filter((s): s is Exclude<Scope, "admin"> => s !== "admin");

describe("route table ↔ fixtures", () => {
  test("the route table has admin routes", () => {
    expect(routes.length).toBeGreaterThan(0);
  });

  test("every admin route has a fixture", () => {
    const missing = routes.filter((r) => !fixtures.has(r.key)).map((r) => r.key);
    if (missing.length) {
      throw new Error(
        `Admin routes without an auth-matrix fixture (add them to a test/support/route-fixtures/<module>.ts file):\n  ${missing.join("\n  ")}`,
      );
    }
  });

  test("every fixture names a route that exists", () => {
    const known = new Set(routes.map((r) => r.key));
    const stale = [...fixtures.values()].filter((f) => !known.has(f.key)).map((f) => `${f.key} (${f.file})`);
    if (stale.length) throw new Error(`Fixtures for routes that do not exist:\n  ${stale.join("\n  ")}`);
  });

  test("fixture scopes are real non-admin scopes", () => {
    for (const f of fixtures.values()) {
      for (const s of f.scopes) expect({ route: f.key, scope: s, known: (NON_ADMIN as string[]).includes(s) }).toEqual({ route: f.key, scope: s, known: true });
    }
  });
});

function expectError(res: TestResponse, status: number, code: string, what: string) {
  const got = { status: res.status, code: res.body?.error?.code, success: res.body?.success };
  expect({ what, ...got }).toEqual({ what, status, code, success: false });
}

function expect2xx(res: TestResponse, what: string) {
  const ok = res.status >= 200 && res.status < 300;
  if (!ok) throw new Error(`${what}: expected 2xx, got ${res.status} ${res.text.slice(0, 300)}`);
  expect(res.body?.success ?? true).toBe(true);
}

for (const route of routes) {
  const fixture = fixtures.get(route.key);
  if (!fixture) continue; // reported by "every admin route has a fixture"
  const systemWide = fixture.productScoped === false;
  // Every GET admin route also accepts `read` (the guard adds it); no write route does.
  const accepted = acceptedScopes(route.method, fixture.scopes);

  describe(route.key, () => {
    const call = async (key: string | null, given?: RouteFixtureContext) => {
      const req = await buildRequest(route, fixture, given ?? (await freshContext(t)));
      return t.request(route.method, req.path, { key, body: req.body });
    };

    test("no credential → 401 UNAUTHORIZED", async () => {
      expectError(await call(null), 401, "UNAUTHORIZED", "no credential");
    });

    // Authentication comes before validation: a caller without a usable key learns nothing about
    // the request from a 400.
    const malformed = (key: string | null) => {
      const path = route.path.replace(/:([A-Za-z0-9_]+)/g, "not a valid id") + "?zz_unknown=1";
      return t.request(route.method, path.replaceAll(" ", "%20"), { key, body: route.hooks.body ? { zz_unknown_field: 1 } : undefined });
    };
    test("no credential and a malformed request → 401 UNAUTHORIZED (not 400)", async () => {
      expectError(await malformed(null), 401, "UNAUTHORIZED", "no credential, malformed");
    });
    test("a key with no scopes and a malformed request → 403 INSUFFICIENT_SCOPE (not 400)", async () => {
      expectError(await malformed(await t.apiKey([])), 403, "INSUFFICIENT_SCOPE", "no scopes, malformed");
    });

    test("a key with no scopes → 403 INSUFFICIENT_SCOPE", async () => {
      expectError(await call(await t.apiKey([])), 403, "INSUFFICIENT_SCOPE", "no scopes");
    });

    for (const scope of NON_ADMIN.filter((s) => !accepted.includes(s))) {
      test(`${scope} (not accepted) → 403 INSUFFICIENT_SCOPE`, async () => {
        expectError(await call(await t.apiKey([scope])), 403, "INSUFFICIENT_SCOPE", scope);
      });
    }

    for (const scope of accepted.filter((s) => s !== "admin")) {
      test(`${scope} (accepted) → neither 401/403 nor 5xx`, async () => {
        const res = await call(await t.apiKey([scope]));
        if ([401, 403].includes(res.status) || res.status >= 500) {
          throw new Error(`${scope} key: got ${res.status} ${res.text.slice(0, 300)}`);
        }
      });
    }

    if (systemWide) {
      test("an admin key bound to a product → 403 PRODUCT_SCOPE_MISMATCH (system-wide route)", async () => {
        const ctx = await freshContext(t);
        expectError(await call(await t.apiKey(["admin"], ctx.product.id), ctx), 403, "PRODUCT_SCOPE_MISMATCH", "bound key");
      });
    } else {
      test("an admin key bound to another product → 403 PRODUCT_SCOPE_MISMATCH", async () => {
        const other = await makeProduct(t.deps);
        expectError(await call(await t.apiKey(["admin"], other.id)), 403, "PRODUCT_SCOPE_MISMATCH", "key bound to another product");
      });

      test("an admin key bound to the same product → 2xx", async () => {
        const ctx = await freshContext(t);
        expect2xx(await call(await t.apiKey(["admin"], ctx.product.id), ctx), "key bound to the same product");
      });
    }

    test("an unbound admin key → 2xx", async () => {
      expect2xx(await call(await t.apiKey(["admin"])), "unbound admin key");
    });

    // Admin sessions: each role is the scopes an API key would carry (ROLE_SCOPES), checked by the
    // same guard; a signed-in user without a role has none.
    const callAs = async (role: AdminRole | null) => {
      const cookie = await t.signIn(`${role ?? "customer"}-${crypto.randomUUID()}@example.com`, { role });
      const req = await buildRequest(route, fixture, await freshContext(t));
      return t.request(route.method, req.path, { cookie, body: req.body });
    };
    test("admin session → 2xx", async () => {
      expect2xx(await callAs("admin"), "admin session");
    });
    for (const role of ["support", "viewer"] as const) {
      if (ROLE_SCOPES[role].some((s) => accepted.includes(s))) {
        test(`${role} session (accepted) → neither 401/403 nor 5xx`, async () => {
          const res = await callAs(role);
          if ([401, 403].includes(res.status) || res.status >= 500) throw new Error(`${role} session: got ${res.status} ${res.text.slice(0, 300)}`);
        });
      } else {
        test(`${role} session (not accepted) → 403 INSUFFICIENT_SCOPE`, async () => {
          expectError(await callAs(role), 403, "INSUFFICIENT_SCOPE", `${role} session`);
        });
      }
    }
    test("signed-in user without a role → 403 INSUFFICIENT_SCOPE", async () => {
      expectError(await callAs(null), 403, "INSUFFICIENT_SCOPE", "customer session");
    });
  });
}
