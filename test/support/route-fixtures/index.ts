// Loads every route fixture file (test/support/route-fixtures/*.ts except types.ts and index.ts) and
// lists the app's admin routes, so the route-table tests (auth matrix, validation, OpenAPI) cover new
// routes without being edited.
import { Glob } from "bun";
import { join } from "node:path";
import type { RouteFixture, RouteFixtureContext, RouteFixtures } from "./types";
import type { TestApp } from "../app";
import { makeProduct } from "../factories";

export const ADMIN_PREFIX = "/api/v1/admin/";
const KEY_SHAPE = /^(GET|POST|PUT|PATCH|DELETE) \/api\/v1\/admin\/\S+$/;

export interface LoadedFixture extends RouteFixture {
  key: string;
  /** The fixture file, for error messages. */
  file: string;
}

export async function loadRouteFixtures(): Promise<Map<string, LoadedFixture>> {
  const dir = import.meta.dir;
  const files = [...new Glob("*.ts").scanSync({ cwd: dir })].filter((f) => f !== "types.ts" && f !== "index.ts").sort();
  const out = new Map<string, LoadedFixture>();
  for (const file of files) {
    const mod = (await import(join(dir, file))) as { default?: RouteFixtures };
    if (!mod.default || typeof mod.default !== "object") {
      throw new Error(`route-fixtures/${file} must default-export a RouteFixtures object`);
    }
    for (const [key, fixture] of Object.entries(mod.default)) {
      if (!KEY_SHAPE.test(key)) throw new Error(`route-fixtures/${file}: key "${key}" is not "METHOD /api/v1/admin/…"`);
      const previous = out.get(key);
      if (previous) throw new Error(`route-fixtures: "${key}" is defined in both ${previous.file} and ${file}`);
      out.set(key, { ...fixture, key, file });
    }
  }
  return out;
}

export interface AdminRoute {
  method: string;
  path: string;
  /** "METHOD /api/v1/admin/path/:param", the fixture key. */
  key: string;
  hooks: Record<string, unknown>;
}

interface RouteLike {
  method: string;
  path: string;
  hooks?: unknown;
}

/** Admin routes from the app's route table (the same table the router serves: `await app.routes()`). */
export function adminRoutes(routes: readonly RouteLike[]): AdminRoute[] {
  return routes
    .filter((r) => r.path.startsWith(ADMIN_PREFIX))
    .map((r) => ({ method: r.method, path: r.path, key: `${r.method} ${r.path}`, hooks: (r.hooks ?? {}) as Record<string, unknown> }));
}

/** A fresh product (and so fresh resources) for each case. */
export async function freshContext(t: TestApp): Promise<RouteFixtureContext> {
  return { t, product: await makeProduct(t.deps) };
}

/** Builds the request a fixture describes: path params filled in, query string appended. */
export async function buildRequest(route: AdminRoute, fixture: RouteFixture, ctx: RouteFixtureContext) {
  const built = await fixture.build(ctx);
  const params = built.params ?? {};
  const path = route.path.replace(/:([A-Za-z0-9_]+)/g, (_, name: string) => {
    const value = params[name];
    if (value === undefined) throw new Error(`fixture for ${route.key} does not provide param "${name}"`);
    return encodeURIComponent(value);
  });
  const qs = built.query && Object.keys(built.query).length ? `?${new URLSearchParams(built.query)}` : "";
  return { path: path + qs, body: built.body, params };
}
