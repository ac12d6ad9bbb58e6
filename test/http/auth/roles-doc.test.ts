// docs/sign-in.md's role table says what each admin role may do (issue 25 point 8: it once left out
// that `support` may refund and revoke). Checked here against the app's route table and the scopes
// each route accepts: the route fixtures' declared scopes, which test/http/auth-matrix.test.ts proves
// against the guard for every route and caller. A route added, or a scope changed, without the table
// following fails this test.
import { afterAll, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { createTestApp } from "../../support/app";
import { adminRoutes, loadRouteFixtures } from "../../support/route-fixtures";
import { acceptedScopes, hasAnyScope, type Scope } from "../../../src/shared/actor";
import { ROLE_SCOPES } from "../../../src/modules/users/domain";
import type { AdminRole } from "../../../src/modules/users/repo";

const ROLES = Object.keys(ROLE_SCOPES) as AdminRole[];
const t = await createTestApp();
afterAll(() => t.close());
const routes = adminRoutes(await t.app.routes());
const fixtures = await loadRouteFixtures();

interface Row {
  what: string;
  route: string;
  may: Record<AdminRole, boolean>;
}

/** The table under "## Admins and roles" with a column per role. */
function roleTable(): Row[] {
  const doc = readFileSync(join(import.meta.dir, "../../../docs/sign-in.md"), "utf8");
  const section = doc.slice(doc.indexOf("## Admins and roles"));
  const lines = section.split("\n");
  const header = lines.findIndex((l) => l.startsWith("| Role may |"));
  expect(header).toBeGreaterThan(-1);
  const columns = lines[header]!.split("|").slice(1, -1).map((c) => c.trim().replaceAll("`", ""));
  expect(columns).toEqual(["Role may", "Route", ...ROLES]);
  const rows: Row[] = [];
  for (const line of lines.slice(header + 2)) {
    if (!line.startsWith("|")) break;
    const cells = line.split("|").slice(1, -1).map((c) => c.trim());
    const may = Object.fromEntries(ROLES.map((r, i) => {
      const mark = cells[2 + i]!;
      expect(["yes", "—"]).toContain(mark);
      return [r, mark === "yes"];
    })) as Record<AdminRole, boolean>;
    rows.push({ what: cells[0]!, route: cells[1]!, may });
  }
  return rows;
}

/** "`POST /admin/licenses/{id}/refund`" → the route table's key "POST /api/v1/admin/licenses/:id/refund". */
function routeKey(cell: string): string | null {
  const m = /^`(GET|POST|PUT|PATCH|DELETE) (\/admin\/[^`]*)`$/.exec(cell);
  return m ? `${m[1]} /api/v1${m[2]!.replace(/\{([A-Za-z0-9_]+)\}/g, ":$1")}` : null;
}

function roleMay(role: AdminRole, route: { method: string; key: string }): boolean {
  const fixture = fixtures.get(route.key);
  if (!fixture) throw new Error(`no route fixture for ${route.key} (test/http/auth-matrix.test.ts reports it)`);
  return hasAnyScope({ scopes: new Set<Scope>(ROLE_SCOPES[role]) }, acceptedScopes(route.method, fixture.scopes));
}

const rows = roleTable();
const listed = new Map(rows.flatMap((r) => (routeKey(r.route) ? [[routeKey(r.route)!, r] as const] : [])));
const everyGet = rows.find((r) => r.route === "every `GET /admin/…` route");
const everyOther = rows.find((r) => r.route === "every other admin route");

test("the table has the row for reads, the row for everything else, and otherwise names routes that exist", () => {
  expect(everyGet).toBeDefined();
  expect(everyOther).toBeDefined();
  const known = new Set(routes.map((r) => r.key));
  for (const r of rows) {
    if (r === everyGet || r === everyOther) continue;
    expect({ row: r.route, route: routeKey(r.route), exists: known.has(routeKey(r.route) ?? "") }).toEqual({ row: r.route, route: routeKey(r.route), exists: true });
  }
  expect(listed.size).toBe(rows.length - 2);
});

test("every GET admin route is open to every role, as the reads row says", () => {
  for (const route of routes.filter((r) => r.method === "GET" && !listed.has(r.key))) {
    for (const role of ROLES) expect({ route: route.key, role, may: roleMay(role, route) }).toEqual({ route: route.key, role, may: everyGet!.may[role] });
  }
});

test("each listed route says exactly which roles may use it", () => {
  for (const route of routes.filter((r) => listed.has(r.key))) {
    for (const role of ROLES) expect({ route: route.key, role, may: roleMay(role, route) }).toEqual({ route: route.key, role, may: listed.get(route.key)!.may[role] });
  }
});

test("every write route a non-admin role may use is listed; the rest are as the last row says", () => {
  for (const route of routes.filter((r) => r.method !== "GET" && !listed.has(r.key))) {
    for (const role of ROLES) expect({ route: route.key, role, may: roleMay(role, route) }).toEqual({ route: route.key, role, may: everyOther!.may[role] });
  }
});
