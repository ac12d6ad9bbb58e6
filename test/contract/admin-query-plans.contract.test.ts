// Issue 26 ("A million licenses"): every admin list over a table that grows with licenses is one
// index range read of a page, on both engines. Each case EXPLAINs the statement exactly as the
// repository builds it (its exported query builder, never copied SQL text) and fails when the plan
// scans a growing table without an index or sorts it (docs/performance.md "Admin lists at scale").
//
// SQLite: `EXPLAIN QUERY PLAN` must not say `SCAN <table>` without `USING`, nor `USE TEMP B-TREE`.
// PostgreSQL: tiny test tables make a sequential scan (and a bitmap scan plus a sort) cheapest, so
// those are switched off first; what is left must name the index and have no `Seq Scan` and no
// `Sort` (with enable_sort off a Sort still appears only when no index serves the order).
import { afterEach, expect, test } from "bun:test";
import { encodeCursor } from "../../src/db/cursor";
import type { AuditFilter } from "../../src/modules/audit/repo";
import { auditListQuery } from "../../src/modules/audit/repo.sqlite";
import { auditListQueryPg } from "../../src/modules/audit/repo.pg";
import { forEachEngine, type Opened } from "./harness";

/** A statement as drizzle builds it. */
interface Built {
  toSQL(): { sql: string; params: unknown[] };
}

/** A case: the statement on each engine, the index its plan must use, the growing tables it reads. */
interface PlanCase {
  name: string;
  sqlite: (db: NonNullable<Opened["sqlite"]>["db"]) => Built;
  pg: (db: NonNullable<Opened["pg"]>["db"]) => Built;
  /** The index (or, where two serve the same filters, either index) the plan must use. */
  index: string | string[];
  tables: string[];
}

async function planOf(o: Opened, c: PlanCase): Promise<string> {
  if (o.sqlite) {
    const { sql, params } = c.sqlite(o.sqlite.db).toSQL();
    const rows = o.sqlite.sqlite.query(`EXPLAIN QUERY PLAN ${sql}`).all(...(params as never[])) as { detail: string }[];
    return rows.map((r) => r.detail).join("\n");
  }
  const { sql, params } = c.pg(o.pg!.db).toSQL();
  const plan = await o.pg!.sql.begin(async (tx) => {
    await tx.unsafe("SET LOCAL enable_seqscan = off");
    await tx.unsafe("SET LOCAL enable_bitmapscan = off");
    await tx.unsafe("SET LOCAL enable_sort = off");
    return (await tx.unsafe(`EXPLAIN ${sql}`, params as never[])) as unknown as { "QUERY PLAN": string }[];
  });
  return plan.map((r) => r["QUERY PLAN"]).join("\n");
}

function expectIndexBacked(o: Opened, c: PlanCase, plan: string): void {
  const why = `${c.name}:\n${plan}`;
  const indexes = typeof c.index === "string" ? [c.index] : c.index;
  expect(indexes.some((i) => plan.includes(i)), why).toBe(true);
  for (const table of c.tables) {
    if (o.sqlite) expect(plan, why).not.toMatch(new RegExp(`SCAN ${table}\\b(?! USING)`));
    else expect(plan, why).not.toMatch(new RegExp(`Seq Scan on ${table}\\b`));
  }
  if (o.sqlite) expect(plan, why).not.toContain("TEMP B-TREE");
  else expect(plan, why).not.toMatch(/\bSort\b/);
}

const CURSOR = encodeCursor({ t: Date.parse("2026-11-22T10:00:00.000Z"), id: "0193a0b2-0000-7000-8000-000000000000" });
const SINCE = new Date("2026-11-01T00:00:00.000Z");
const UNTIL = new Date("2026-11-22T00:00:00.000Z");
const PRODUCT = "0193a0b2-0000-7000-8000-0000000000aa";

// GET /admin/audit: every filter it offers, alone, with a time window and with a cursor.
const auditCases = (): PlanCase[] => {
  const variants: [string, Partial<AuditFilter>, PlanCase["index"]][] = [
    ["no filter", {}, "audit_created_idx"],
    ["since/until", { since: SINCE, until: UNTIL }, "audit_created_idx"],
    ["entity_type", { entityType: "license" }, "audit_entity_type_idx"],
    ["entity_type + entity_id", { entityType: "license", entityId: "lic-1" }, "audit_entity_idx"],
    ["action", { action: "license.update" }, "audit_action_idx"],
    ["actor_id", { actorId: "key-1" }, "audit_actor_idx"],
    ["product_id", { productId: PRODUCT }, "audit_product_idx"],
    ["product_id + since/until", { productId: PRODUCT, since: SINCE, until: UNTIL }, ["audit_product_idx", "audit_created_idx"]],
  ];
  return variants.flatMap(([name, f, index]) =>
    [false, true].map((paged) => {
      const filter: AuditFilter = { ...f, limit: 50, ...(paged ? { cursor: CURSOR } : {}) };
      return {
        name: `GET /admin/audit, ${name}${paged ? ", next page" : ""}`,
        sqlite: (db) => auditListQuery(db, filter),
        pg: (db) => auditListQueryPg(db, filter),
        index,
        tables: ["audit_log"],
      } satisfies PlanCase;
    }),
  );
};

const CASES: PlanCase[] = [...auditCases()];

forEachEngine("admin list query plans", (_engine, open) => {
  let o: Opened | null = null;
  afterEach(async () => {
    await o?.close();
    o = null;
  });

  test("every admin list statement reads its page by an index, without a sort", async () => {
    o = await open();
    const failures: string[] = [];
    for (const c of CASES) {
      const plan = await planOf(o, c);
      if (process.env.KEYWARD_SHOW_PLANS) console.log(`${c.name}\n${plan}\n`);
      try {
        expectIndexBacked(o, c, plan);
      } catch {
        failures.push(`${c.name} (want ${String(c.index)}):\n${plan}`);
      }
    }
    expect(failures).toEqual([]);
  });
});
