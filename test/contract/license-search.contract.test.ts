// The admin license list at 10M rows (issue 26): every list shape and every `search` branch is one
// index range read in the page's order — checked on the repo's own statement under EXPLAIN — and each
// filter returns the right rows and pages through ties without duplicates or gaps, on every engine.
import { afterEach, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import type { License, LicenseListFilter, LicenseRepo } from "../../src/modules/licenses/repo";
import { licenseListQuery } from "../../src/modules/licenses/repo.sqlite";
import { licenseListQueryPg } from "../../src/modules/licenses/repo.pg";
import { licenseListOrder, positionOf, type LicenseListPosition } from "../../src/modules/licenses/listing";
import { asciiLower } from "../../src/shared/ascii";
import { forEachEngine, type Opened } from "./harness";
import { seedLicense, seedPlan, seedProduct, SEED_TIME } from "./seed";
import { repoFor } from "./repos";

const at = (ms: number) => new Date(SEED_TIME.getTime() + ms);
const ID = "00000000-0000-7000-8000-000000000003";
// Inside the PostgreSQL table's spread (below), so no range is empty to the planner.
const FROM = new Date("2025-01-02T00:00:00Z");
const TO = new Date("2025-01-10T00:00:00Z");
const EXPIRY = new Date("2026-06-01T00:00:00Z");
const CURSOR: LicenseListPosition = { t: at(5000).getTime(), id: ID };

/** Index names per engine where they differ: SQLite's automatic unique indexes vs PostgreSQL's constraint names. */
const PKEY = { sqlite: "sqlite_autoindex_licenses_1", postgres: "licenses_pkey" };

interface Shape {
  name: string;
  filter: Omit<LicenseListFilter, "limit">;
  /** Any of these indexes answers the shape without a sort (combined filters may use either). */
  indexes: (string | { sqlite: string; postgres: string })[];
}

const shapes = (P: string, PL: string): Shape[] => [
  { name: "no filter", filter: {}, indexes: ["licenses_created_idx"] },
  { name: "product_id", filter: { productId: P }, indexes: ["licenses_product_created_idx"] },
  { name: "plan_id", filter: { planId: PL }, indexes: ["licenses_plan_created_idx"] },
  { name: "status", filter: { status: "active" }, indexes: ["licenses_status_created_idx"] },
  { name: "product_id + status", filter: { productId: P, status: "active" }, indexes: ["licenses_product_status_created_idx"] },
  { name: "product_id + plan_id", filter: { productId: P, planId: PL }, indexes: ["licenses_plan_created_idx"] },
  { name: "plan_id + status", filter: { planId: PL, status: "active" }, indexes: ["licenses_plan_created_idx"] },
  { name: "product_id + plan_id + status", filter: { productId: P, planId: PL, status: "active" }, indexes: ["licenses_product_status_created_idx"] },
  { name: "external_customer_id", filter: { externalCustomerId: "cus_1" }, indexes: ["licenses_ext_customer_idx"] },
  { name: "external_workspace_id", filter: { externalWorkspaceId: "ws_1" }, indexes: ["licenses_ext_workspace_idx"] },
  { name: "email (exact)", filter: { email: "A@Example.com" }, indexes: ["licenses_email_lower_idx"] },
  { name: "email + product_id", filter: { email: "a@example.com", productId: P }, indexes: ["licenses_email_lower_idx"] },
  { name: "email_prefix", filter: { emailPrefix: "ali" }, indexes: ["licenses_email_lower_idx"] },
  { name: "email_prefix + product_id + status + created range", filter: { emailPrefix: "ali", productId: P, status: "active", createdAfter: FROM, createdBefore: TO }, indexes: ["licenses_email_lower_idx"] },
  { name: "email_domain", filter: { emailDomain: "example.com" }, indexes: ["licenses_email_domain_idx"] },
  { name: "email_domain + product_id", filter: { emailDomain: "example.com", productId: P }, indexes: ["licenses_email_domain_idx"] },
  { name: "created_after + created_before", filter: { createdAfter: FROM, createdBefore: TO }, indexes: ["licenses_created_idx"] },
  { name: "product_id + created range", filter: { productId: P, createdAfter: FROM, createdBefore: TO }, indexes: ["licenses_product_created_idx"] },
  { name: "status + created_after", filter: { status: "active", createdAfter: FROM }, indexes: ["licenses_status_created_idx"] },
  { name: "expiring_before", filter: { expiringBefore: EXPIRY }, indexes: ["licenses_valid_until_idx"] },
  { name: "expiring_before + status", filter: { expiringBefore: EXPIRY, status: "active" }, indexes: ["licenses_status_valid_until_idx"] },
  { name: "expiring_before + product_id", filter: { expiringBefore: EXPIRY, productId: P }, indexes: ["licenses_product_valid_until_idx"] },
  { name: "expiring_before + product_id + status", filter: { expiringBefore: EXPIRY, productId: P, status: "active" }, indexes: ["licenses_product_status_valid_until_idx"] },
  { name: "expiring_before + product_id + plan_id + created range", filter: { expiringBefore: EXPIRY, productId: P, planId: PL, createdAfter: FROM, createdBefore: TO }, indexes: ["licenses_product_valid_until_idx"] },
  // The search branches (the service maps a term onto exactly one of these).
  { name: "search: key", filter: { keyHash: "h" }, indexes: ["licenses_key_hash_unique"] },
  { name: "search: key + product_id", filter: { keyHash: "h", productId: P }, indexes: ["licenses_key_hash_unique"] },
  { name: "search: id", filter: { id: ID }, indexes: [PKEY] },
  { name: "search: key hint", filter: { keyHint: "ABCD" }, indexes: ["licenses_key_hint_idx"] },
  { name: "search: key hint + product_id + status", filter: { keyHint: "ABCD", productId: P, status: "active" }, indexes: ["licenses_key_hint_idx"] },
  { name: "search: @domain", filter: { emailDomain: "example.com" }, indexes: ["licenses_email_domain_idx"] },
  { name: "search: email", filter: { email: "a@example.com" }, indexes: ["licenses_email_lower_idx"] },
  { name: "search: external customer", filter: { externalCustomerId: "x" }, indexes: ["licenses_ext_customer_idx"] },
  { name: "search: external workspace", filter: { externalWorkspaceId: "x" }, indexes: ["licenses_ext_workspace_idx"] },
  { name: "search: email prefix", filter: { emailPrefix: "x" }, indexes: ["licenses_email_lower_idx"] },
  { name: "search: external customer + product_id", filter: { externalCustomerId: "x", productId: P }, indexes: ["licenses_ext_customer_idx"] },
];

/** Every shape, on its first page and after a cursor (the next pages' statement differs). */
const withNextPages = (base: Shape[]): Shape[] => base.flatMap((s) =>
  s.filter.id || s.filter.keyHash
    ? [s]
    : [s, { ...s, name: `${s.name}, next page`, filter: { ...s.filter, cursor: licenseListOrder(s.filter) === "email" ? { ...CURSOR, e: "alice@example.com" } : CURSOR } }],
);

async function plan(o: Opened, f: LicenseListFilter): Promise<string> {
  if (o.sqlite) {
    const q = licenseListQuery(o.sqlite.db, f).toSQL();
    return (o.sqlite.sqlite.query(`EXPLAIN QUERY PLAN ${q.sql}`).all(...(q.params as never[])) as { detail: string }[]).map((p) => p.detail).join("\n");
  }
  return await o.pg!.db.transaction(async (tx) => {
    // Small tables make a sequential scan, or a bitmap scan and a sort of its few matches, cheapest;
    // forbid them to see whether the statement has a plan that reads one index range in order.
    await tx.execute(sql`SET LOCAL enable_seqscan = off`);
    await tx.execute(sql`SET LOCAL enable_bitmapscan = off`);
    await tx.execute(sql`SET LOCAL enable_sort = off`);
    const rows = (await tx.execute(sql`EXPLAIN ${licenseListQueryPg(o.pg!.db, f)}`)) as unknown as { "QUERY PLAN": string }[];
    return rows.map((r) => r["QUERY PLAN"]).join("\n");
  });
}

forEachEngine("License list shapes", (engine, open) => {
  let o: Opened;
  let repo: LicenseRepo;
  const setup = async () => {
    o = await open();
    repo = repoFor(o).licenses;
  };
  afterEach(() => o?.close());

  test("every list shape and search branch is one index range in the page's order: no table scan, no sort", async () => {
    await setup();
    const products = [];
    for (let i = 0; i < 10; i++) {
      const product = await seedProduct(o);
      products.push({ product, plan: (await seedPlan(o, product.id)).plan });
    }
    if (o.pg) {
      // PostgreSQL plans by statistics: give it a table shaped like a real one (20,000 licenses over
      // 10 products, 7 statuses, a spread of creation and expiry times), analyzed, as autovacuum does.
      const ids = products.map((p) => `('${p.product.id}','${p.plan.id}')`).join(",");
      await o.pg.sql.unsafe(`
        WITH pp AS (SELECT row_number() OVER () - 1 AS n, p, pl FROM (VALUES ${ids}) AS v(p, pl))
        INSERT INTO licenses (id, product_id, plan_id, key_hash, key_encrypted, key_hint, email, status, valid_until, created_at, updated_at, external_customer_id)
        SELECT gen_random_uuid()::text, pp.p, pp.pl, 'h' || g, 's' || g, upper(substr(md5(g::text), 1, 4)), 'user' || g || '@d' || (g % 500) || '.example',
               (ARRAY['active','trialing','past_due','canceled','expired','suspended','revoked'])[1 + g % 7],
               CASE WHEN g % 3 = 0 THEN NULL ELSE timestamptz '2026-01-01' + (g % 1000) * interval '1 day' END,
               timestamptz '2025-01-01' + g * interval '1 minute', now(), 'cus_' || (g % 5000)
        FROM generate_series(1, 20000) AS g JOIN pp ON pp.n = g % 10 ORDER BY random()`);
      await o.pg.sql.unsafe("ANALYZE licenses");
    } else {
      // SQLite plans without statistics (Keyward does not run ANALYZE): the plan is the same at any size.
      for (let i = 0; i < 5; i++) await seedLicense(o, products[0]!.product.id, products[0]!.plan.id, { createdAt: at(i * 1000), validUntil: at(i * 1000) });
    }
    const SHAPES = withNextPages(shapes(products[0]!.product.id, products[0]!.plan.id));
    const failures: string[] = [];
    for (const s of SHAPES) {
      const text = await plan(o, { ...s.filter, limit: 51 });
      const names = s.indexes.map((i) => (typeof i === "string" ? i : i[engine]));
      const problems: string[] = [];
      if (!names.some((n) => text.includes(n))) problems.push(`uses none of ${names.join(", ")}`);
      if (engine === "sqlite") {
        if (/SCAN licenses\b(?! USING)/.test(text)) problems.push("scans the table");
        if (/TEMP B-TREE/.test(text)) problems.push("sorts (temp B-tree)");
        // A full index scan is only right when nothing narrows the read (it stops after the page).
        if (Object.keys(s.filter).some((k) => k !== "cursor") && /SCAN licenses USING/.test(text) && !/SEARCH licenses/.test(text)) problems.push("scans a whole index");
      } else {
        if (/Seq Scan on licenses\b/.test(text)) problems.push("scans the table");
        if (/Sort\b/.test(text)) problems.push("sorts");
        if (/Bitmap/.test(text)) problems.push("bitmap scan (unordered)");
      }
      if (problems.length) failures.push(`${s.name}: ${problems.join("; ")}\n    ${text.replaceAll("\n", "\n    ")}`);
    }
    expect(failures).toEqual([]);
  });
});
