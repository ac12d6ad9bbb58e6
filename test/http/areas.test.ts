// The front door (src/app.ts): the client area is composed at start, the console area on the first
// request for one of its paths, and a request's path alone says which area serves it.
import { afterAll, describe, expect, test } from "bun:test";
import { createTestApp, type TestApp } from "../support/app";
import { CONSOLE_PREFIXES, createApp, isConsolePath } from "../../src/app";
import type { Deps } from "../../src/deps";

const apps: TestApp[] = [];
afterAll(() => Promise.all(apps.map((a) => a.close())));
const fresh = async () => {
  const t = await createTestApp();
  apps.push(t);
  return t;
};

describe("which area a path belongs to", () => {
  test("every route is served by the area its path names, and both areas have routes", async () => {
    const t = await fresh();
    const routes = await t.app.routes();
    const misplaced = routes.filter((r) => (r.area === "console") !== isConsolePath(r.path)).map((r) => `${r.area}: ${r.method} ${r.path}`);
    expect(misplaced).toEqual([]);
    expect(routes.filter((r) => r.area === "client").length).toBeGreaterThan(15);
    expect(routes.filter((r) => r.area === "console").length).toBeGreaterThan(100);
    // Every console prefix names at least one route: none is left over from a moved route.
    for (const prefix of CONSOLE_PREFIXES) expect({ prefix, used: routes.some((r) => r.area === "console" && r.path.startsWith(prefix)) }).toEqual({ prefix, used: true });
  });

  test("a prefix without a trailing slash covers itself and what is under it, not a longer name", () => {
    expect(isConsolePath("/api/v1/openapi.json")).toBe(true);
    expect(isConsolePath("/api/v1/openapi.json/")).toBe(true);
    expect(isConsolePath("/api/v1/docs/assets/init.js")).toBe(true);
    expect(isConsolePath("/api/v1/docsx")).toBe(false);
    expect(isConsolePath("/api/v1/license/checkout")).toBe(true);
    expect(isConsolePath("/api/v1/license/checkoutx")).toBe(false);
    expect(isConsolePath("/api/v1/license/verify")).toBe(false);
    expect(isConsolePath("/api/v1/license/support/checkout")).toBe(true);
    expect(isConsolePath("/api/v1/admin")).toBe(false); // no route there: the client area's 404
    expect(isConsolePath("/api/v1/admin/products")).toBe(true);
  });
});

describe("the console area loads on first use", () => {
  test("client requests do not load it; the first console request does, and is answered", async () => {
    const t = await fresh();
    expect(t.app.loadedAreas()).toEqual(["client"]);
    expect((await t.request("GET", "/api/v1/health")).status).toBe(200);
    expect((await t.request("POST", "/api/v1/license/verify", { body: { license_key: "KW-NOPE", identifier: "a" } })).status).toBe(404);
    expect((await t.request("GET", "/api/v1/license/keys")).status).toBe(200);
    expect((await t.request("GET", "/api/v1/nowhere")).status).toBe(404);
    expect(t.app.loadedAreas()).toEqual(["client"]);
    const list = await t.request("GET", "/api/v1/admin/products");
    expect(list.status).toBe(200);
    expect(list.body.success).toBe(true);
    expect(t.app.loadedAreas()).toEqual(["client", "console"]);
  });

  test("requests that arrive while it loads all wait for it and get their own answers", async () => {
    const t = await fresh();
    const answers = await Promise.all([
      ...Array.from({ length: 8 }, () => t.request("GET", "/api/v1/admin/products")),
      t.request("GET", "/api/v1/admin/products", { key: null }),
      t.request("POST", "/api/v1/auth/otp/request", { body: { email: "not an address" } }),
      t.request("GET", "/api/v1/openapi.json"),
    ]);
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200, 200, 200, 200, 401, 400, 200]);
    expect(answers[8]!.body.error.code).toBe("UNAUTHORIZED");
    expect(answers[9]!.body.error.code).toBe("VALIDATION_ERROR");
    // The document describes both areas' routes.
    const paths = Object.keys(answers[10]!.body.paths);
    expect(paths).toContain("/api/v1/license/verify");
    expect(paths).toContain("/api/v1/admin/products");
  });

  test("an area that cannot be composed answers 500 in the envelope, and the next request tries again", async () => {
    const t = await fresh();
    // The console area reads deps.config when it is composed; the client area read it at start.
    const deps: Deps = { ...t.deps };
    const app = createApp(deps);
    const config = deps.config;
    Object.defineProperty(deps, "config", { configurable: true, get: () => { throw new Error("composition failed"); } });
    const get = () => app.handle(new Request("http://localhost/api/v1/admin/products", { headers: { authorization: `Bearer ${t.adminKey}` } }));
    const failed = await get();
    expect(failed.status).toBe(500);
    expect(await failed.json()).toEqual({ success: false, error: { code: "INTERNAL_ERROR", message: "An internal error occurred.", details: null } });
    expect(app.loadedAreas()).toEqual(["client"]);
    Object.defineProperty(deps, "config", { configurable: true, value: config });
    expect((await get()).status).toBe(200);
    expect(app.loadedAreas()).toEqual(["client", "console"]);
  });

  test("an unknown path gets the same 404 envelope from either area", async () => {
    const t = await fresh();
    const client = await t.request("GET", "/api/v1/nowhere", { key: null });
    const console = await t.request("GET", "/api/v1/admin/nowhere", { key: null });
    expect(client.status).toBe(404);
    expect(console.status).toBe(404);
    expect(console.body).toEqual(client.body);
    expect(client.body.error.code).toBe("NOT_FOUND");
    expect(client.headers.get("x-request-id")).toBeTruthy();
    expect(console.headers.get("x-request-id")).toBeTruthy();
  });

  test("on a listening server, the console area loaded after listening still knows each request's socket peer", async () => {
    // X-Forwarded-For is read only when the socket peer is a trusted proxy (127.0.0.1 here): a
    // console area that did not know the server would see no peer, ignore the header, and count every
    // request below as one client.
    const t = await createTestApp({ env: { RATE_LIMIT_PUBLIC_PER_MINUTE: "2", TRUST_PROXY: "127.0.0.1/32" } });
    apps.push(t);
    const s = t.listen();
    const codes: number[] = [];
    for (const client of ["198.51.100.1", "198.51.100.2", "198.51.100.3", "198.51.100.1", "198.51.100.1"]) {
      codes.push((await fetch(`${s.url}/api/v1/auth/providers`, { headers: { "x-forwarded-for": client } })).status);
    }
    expect(codes).toEqual([200, 200, 200, 200, 429]);
  });
});
