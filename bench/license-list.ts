// license-list scaling (issue 26): the admin license list's repository read (SQLite), a page of 50,
// for every filter shape and order, first page and the page after it, on a table of N licenses vs
// one of 20,000. Target ≤ 3: a page costs what its 50 rows cost, not what the table holds (before
// the list's indexes, the first page at 1,000,000 licenses took 2.8 s and a search 0.5-0.8 s).
// The ratio is the worst shape's best-of-5 time at N over the same at 20,000 (both sub-millisecond,
// so a noisy run can move it; the per-shape table says where).
//
// Not in `npm run bench` (filling 1,000,000 rows takes about 2 minutes on 2 cores):
//   bun bench/license-list.ts                    N = 1,000,000
//   BENCH_LIST_ROWS=200000 bun bench/license-list.ts
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDatabase } from "../src/db/client";
import { runMigrations } from "../src/db/migrate";
import { createSqliteRepos } from "../src/container";
import { licenseListOrder, positionOf } from "../src/modules/licenses/listing";
import type { LicenseListFilter } from "../src/modules/licenses/repo";
import { asciiLower } from "../src/shared/ascii";
import { log, printRatio, section, type Target } from "./lib/report";

const NAME = "license-list";
const TARGET: Target = { op: "<=", value: 3 };
const N = Number(process.env.BENCH_LIST_ROWS ?? 1_000_000);
/** Enough that every shape fills its page of 50 at both sizes (the ratio compares like with like). */
const SMALL = 20_000;
const T0 = Date.parse("2020-01-01T00:00:00Z");

const series = (n: number) => `(WITH RECURSIVE g(value) AS (SELECT 0 UNION ALL SELECT value + 1 FROM g WHERE value < ${n - 1}) SELECT value FROM g)`;

/** A migrated database of `rows` licenses over 20 products, 60 plans, 7 statuses, 100 email domains. */
function fill(dir: string, rows: number) {
  const h = openDatabase(join(dir, `list-${rows}.db`));
  runMigrations(h.sqlite, Date.now());
  const t0 = performance.now();
  h.sqlite.run(`INSERT INTO products (id, slug, name, created_at, updated_at) SELECT 'p' || value, 'p' || value, 'p', 0, 0 FROM ${series(20)}`);
  h.sqlite.run(`INSERT INTO plans (id, product_id, name, license_type, created_at, updated_at) SELECT 'pl' || value, 'p' || (value % 20), 'pl', 'perpetual', 0, 0 FROM ${series(60)}`);
  h.sqlite.run(`INSERT INTO licenses (id, product_id, plan_id, key_hash, key_encrypted, key_hint, email, status, valid_until, created_at, updated_at, external_customer_id, external_workspace_id)
    SELECT printf('%08x-0000-7000-8000-%012x', value / 1000, value), 'p' || (value % 20), 'pl' || (value % 60), 'h' || value, 's' || value,
      upper(substr(hex(randomblob(2)), 1, 4)), 'user' || value || '@d' || (value % 100) || '.example',
      CASE value % 7 WHEN 0 THEN 'active' WHEN 1 THEN 'trialing' WHEN 2 THEN 'past_due' WHEN 3 THEN 'canceled' WHEN 4 THEN 'expired' WHEN 5 THEN 'suspended' ELSE 'revoked' END,
      CASE WHEN value % 3 = 0 THEN NULL ELSE ${T0} + (value % 100000) * 60000 END,
      ${T0} + (value / 3) * 1000, 0, 'cus_' || (value % 400), 'ws_' || (value % 400)
    FROM ${series(rows)}`);
  log(`${rows} licenses written in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  return h;
}

const SHAPES: [string, Omit<LicenseListFilter, "limit">][] = [
  ["no filter", {}],
  ["product_id", { productId: "p3" }],
  ["plan_id", { planId: "pl7" }],
  ["status", { status: "active" }],
  ["product_id + status", { productId: "p3", status: "revoked" }],
  ["external_customer_id", { externalCustomerId: "cus_42" }],
  ["external_workspace_id", { externalWorkspaceId: "ws_42" }],
  ["email", { email: "USER4242@d42.example" }],
  ["email_prefix", { emailPrefix: "user4" }],
  ["email_domain", { emailDomain: "d42.example" }],
  ["created range", { createdAfter: new Date(T0 + 100_000), createdBefore: new Date(T0 + 300_000_000) }],
  ["expiring_before", { expiringBefore: new Date(T0 + 50_000 * 60_000) }],
  ["expiring_before + status", { expiringBefore: new Date(T0 + 50_000 * 60_000), status: "active" }],
  ["expiring_before + product + status", { expiringBefore: new Date(T0 + 50_000 * 60_000), productId: "p3", status: "active" }],
  ["key hint", { keyHint: "ABCD" }],
  ["key hash", { keyHash: "h500" }],
];

async function timeShapes(h: ReturnType<typeof openDatabase>): Promise<Map<string, number>> {
  const repo = createSqliteRepos(h).licenses;
  const out = new Map<string, number>();
  for (const [name, f] of SHAPES) {
    let first = Infinity;
    let next = Infinity;
    for (let r = 0; r < 5; r++) {
      const t0 = performance.now();
      const page = await repo.list({ ...f, limit: 50 });
      first = Math.min(first, performance.now() - t0);
      const last = page.items.at(-1);
      if (last && page.hasMore) {
        const t1 = performance.now();
        await repo.list({ ...f, limit: 50, cursor: positionOf(licenseListOrder(f), last, asciiLower) });
        next = Math.min(next, performance.now() - t1);
      }
    }
    out.set(name, first);
    if (Number.isFinite(next)) out.set(`${name}, next page`, next);
  }
  return out;
}

section(`${NAME}: a page of 50 at ${N} licenses vs ${SMALL} (SQLite)`);
const dir = mkdtempSync(join(tmpdir(), "keyward-bench-list-"));
try {
  const small = fill(dir, SMALL);
  const big = fill(dir, N);
  // Interleaved, twice, best of both: the sizes see the same machine state.
  const [s1, b1, s2, b2] = [await timeShapes(small), await timeShapes(big), await timeShapes(small), await timeShapes(big)];
  let worst = 0;
  for (const name of s1.keys()) {
    const s = Math.min(s1.get(name)!, s2.get(name)!);
    const b = Math.min(b1.get(name) ?? Infinity, b2.get(name) ?? Infinity);
    const ratio = b / Math.max(s, 0.05); // below 50 µs is timer noise
    worst = Math.max(worst, ratio);
    log(`${name.padEnd(42)} ${SMALL} ${s.toFixed(3)} ms   ${N} ${b.toFixed(3)} ms   ×${ratio.toFixed(2)}`);
  }
  await small.close();
  await big.close();
  printRatio(NAME, worst, TARGET);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
