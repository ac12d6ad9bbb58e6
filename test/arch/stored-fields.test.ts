// Plan fields and settings that are stored and returned but that nothing acts on yet (team seats,
// support renewals, emails, the customer portal, reminders arrive in later versions) must say so,
// in docs/admin-api.md and in the served OpenAPI document, so no reader thinks they work.
//
// The list below is checked both ways: every listed field is described as "stored, takes effect
// later", no other field is, and no code outside the owning module reads a listed field. When a
// version starts using one (say, team seats read max_seats), this test fails until the field
// leaves the list and its documentation says what it does.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { createTestApp, type TestApp } from "../support/app";

const ROOT = join(import.meta.dir, "../..");
const PREFIX = "Stored; takes effect from the version that adds";

/** Wire name → the identifiers code would use to read it. */
const STORED_ONLY = {
  // Every plan field is acted on now (support_days and support_renewal_price_id by payments).
  plans: {},
  // Every setting is acted on now: vendor_name, support_email, portal_url and the reminder settings
  // by the lifecycle emails and pass, email_from as the From header (modules/email).
  settings: {},
} as const;
const FIELDS = [...Object.keys(STORED_ONLY.plans), ...Object.keys(STORED_ONLY.settings)].sort();

// Where the fields may appear without being "used": their own module, the schema and migrations,
// and the demo loader (which fills them in so the demo shows them).
const OWNERS: Record<keyof typeof STORED_ONLY, string[]> = {
  plans: ["src/modules/plans/", "src/db/", "src/demo.ts"],
  settings: ["src/modules/settings/", "src/db/"],
};

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? files(p) : p.endsWith(".ts") ? [p] : [];
  });
}

let t: TestApp;
let openapi: { paths: Record<string, any> };
beforeAll(async () => {
  t = await createTestApp();
  openapi = (await t.request("GET", "/api/v1/openapi.json")).body;
}, 30_000);
afterAll(() => t.close());

/** The object schemas of the plan and settings routes: request bodies and the `data` of 200/201 responses. */
function routeSchemas(): { where: string; properties: Record<string, { description?: string }> }[] {
  const out: { where: string; properties: Record<string, { description?: string }> }[] = [];
  for (const [path, methods] of Object.entries(openapi.paths)) {
    if (!/^\/api\/v1\/admin\/(plans|settings)/.test(path)) continue;
    for (const [method, op] of Object.entries<any>(methods)) {
      const body = op.requestBody?.content?.["application/json"]?.schema;
      if (body?.properties) out.push({ where: `${method} ${path} body`, properties: body.properties });
      for (const status of ["200", "201"]) {
        const data = op.responses?.[status]?.content?.["application/json"]?.schema?.properties?.data;
        if (data?.properties) out.push({ where: `${method} ${path} ${status}`, properties: data.properties });
      }
    }
  }
  return out;
}

describe("fields that are stored but not acted on yet", () => {
  test("the served OpenAPI document says so for each of them, on every plan and settings route", () => {
    const schemas = routeSchemas();
    expect(schemas.length).toBeGreaterThanOrEqual(6); // sanity: plan create/update/get, settings get/patch
    const wrong: string[] = [];
    const marked = new Set<string>();
    for (const { where, properties } of schemas) {
      for (const [name, prop] of Object.entries(properties)) {
        const says = typeof prop.description === "string" && prop.description.startsWith(PREFIX);
        if (says) marked.add(name);
        if (FIELDS.includes(name) && !says) wrong.push(`${where}: ${name} has description ${JSON.stringify(prop.description)}`);
        if (!FIELDS.includes(name) && says) wrong.push(`${where}: ${name} is not in the list but is described as stored only`);
      }
    }
    expect(wrong).toEqual([]);
    expect([...marked].sort()).toEqual(FIELDS);
  });

  test("docs/admin-api.md says so in each field's table row, and for no other field", () => {
    const doc = readFileSync(join(ROOT, "docs/admin-api.md"), "utf8");
    const rows = [...doc.matchAll(/^\| `([a-z_]+)` \|(.*)$/gm)].map((m) => ({ name: m[1]!, text: m[2]! }));
    for (const f of FIELDS) {
      const row = rows.find((r) => r.name === f);
      expect({ field: f, says: row?.text.includes(PREFIX) ?? "no row" }).toEqual({ field: f, says: true });
    }
    expect(rows.filter((r) => r.text.includes(PREFIX)).map((r) => r.name).sort()).toEqual(FIELDS);
  });

  test("no code outside the owning module reads them (when one does, update this list and the docs)", () => {
    const readers: string[] = [];
    for (const file of files(join(ROOT, "src"))) {
      const rel = relative(ROOT, file);
      if (rel.endsWith(".test.ts")) continue;
      const text = readFileSync(file, "utf8");
      for (const [module, fields] of Object.entries(STORED_ONLY) as [keyof typeof STORED_ONLY, Record<string, readonly string[]>][]) {
        if (OWNERS[module].some((o) => rel.startsWith(o))) continue;
        for (const [wire, identifiers] of Object.entries(fields)) {
          for (const id of identifiers) if (new RegExp(`\\b${id}\\b`).test(text)) readers.push(`${rel} reads ${wire} (${id})`);
        }
      }
    }
    expect(readers).toEqual([]);
  });
});
