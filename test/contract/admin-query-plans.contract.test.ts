// Issue 26 ("A million licenses"): every admin list over a table that grows with licenses is one
// index range read of a page, and every pruning batch finds its rows by an index, on both engines. Each case EXPLAINs the statement exactly as the
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
import { auditListQuery } from "../../src/modules/audit/repo.sql";
import type { EmailFilter, EventFilter } from "../../src/modules/outbox/repo";
import { emailListQuery, eventListQuery } from "../../src/modules/outbox/repo.sqlite";
import { emailListQueryPg, eventListQueryPg } from "../../src/modules/outbox/repo.pg";
import type { DeliveryFilter } from "../../src/modules/webhooks/repo";
import { deliveryListQuery } from "../../src/modules/webhooks/repo.sql";
import { claimDueDeliveries } from "../../src/modules/webhooks/claims";
import type { SessionFilter } from "../../src/modules/sessions/repo";
import { sessionListQuery } from "../../src/modules/sessions/repo.sql";
import type { UserFilter } from "../../src/modules/users/repo";
import { userListQuery } from "../../src/modules/users/repo.sql";
import type { QueryDialect } from "../../src/db/dialect/query";
import { sqliteQueryDialect } from "../../src/db/dialect/query.sqlite";
import { pgQueryDialect } from "../../src/db/dialect/query.pg";
import { activationsOfLicenseQuery } from "../../src/modules/activations/repo.sqlite";
import { activationsOfLicenseQueryPg } from "../../src/modules/activations/repo.pg";
import { acceptedSeatsQuery, licensesOwnedQuery, seatsOfLicenseQuery } from "../../src/modules/seats/repo.sql";
import { offlineActivationsOfLicenseQuery } from "../../src/modules/offline/repo.sql";
import { paymentsOfLicenseQuery } from "../../src/modules/payments/repo.sql";
import { drizzle as drizzleSqlite } from "drizzle-orm/bun-sqlite";
import * as sqliteSchema from "../../src/db/schema";
import { createSqliteRepos } from "../../src/container";
import { createPgRepos } from "../../src/repos.pg";
import type { Repos } from "../../src/deps";
import type { RateLimiter } from "../../src/shared/rate-limiter";
import { createSqliteRateLimiter } from "../../src/modules/abuse/rate-limit.sqlite";
import { createPgRateLimiter } from "../../src/modules/abuse/rate-limit.pg";
import type { ReleaseFilter } from "../../src/modules/releases/repo";
import { feedParams, feedQuery, releaseListQuery } from "../../src/modules/releases/repo.sql";
import { fillPlaceholders } from "drizzle-orm";
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

/**
 * PostgreSQL, with no statistics, takes an equality filter to be selective and prefers the shorter
 * (endpoint_id, created_at, id) index for a status or event type filter, then filters; with real
 * data (one endpoint, most deliveries delivered, one event type common) it takes the longer ones.
 * These are the statistics of such a table: one endpoint, 5,000 delivered deliveries of one type.
 */
async function realisticDeliveryStatistics(sql: NonNullable<Opened["pg"]>["sql"]): Promise<void> {
  await sql.unsafe(
    `INSERT INTO webhook_endpoints (id, url, description, events, enabled, secret_encrypted, created_at, updated_at)
     VALUES ('${PRODUCT}', 'https://example.com/hook', '', '["*"]', true, 'x', now(), now())`,
  );
  await sql.unsafe(
    `INSERT INTO webhook_deliveries (id, endpoint_id, event_type, body, status, next_attempt_at, created_at)
     SELECT 'd-' || n, '${PRODUCT}', 'license.updated', '{}', 'delivered', now(), now() - n * interval '1 minute'
       FROM generate_series(1, 5000) AS n`,
  );
  await sql.unsafe("ANALYZE webhook_deliveries");
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

/** Each variant of a list, on its first page and on a next page (a cursor). */
/** A statement written once (a repo.sql.ts) as the two engines' builders listCases takes. */
function onBoth<F>(q: (d: QueryDialect, f: F) => Built): [(db: NonNullable<Opened["sqlite"]>["db"], f: F) => Built, (db: NonNullable<Opened["pg"]>["db"], f: F) => Built] {
  return [(db, f) => q(sqliteQueryDialect({ db, sqlite: db.$client }), f), (db, f) => q(pgQueryDialect({ db }), f)];
}

/** A statement written once as a PlanCase's two builders. */
function onBothCase(q: (d: QueryDialect) => Built): Pick<PlanCase, "sqlite" | "pg"> {
  return { sqlite: (db) => q(sqliteQueryDialect({ db, sqlite: db.$client })), pg: (db) => q(pgQueryDialect({ db })) };
}

function listCases<F extends { limit: number; cursor?: string }>(
  route: string,
  tables: string[],
  sqlite: (db: NonNullable<Opened["sqlite"]>["db"], f: F) => Built,
  pg: (db: NonNullable<Opened["pg"]>["db"], f: F) => Built,
  variants: [string, Omit<F, "limit" | "cursor">, PlanCase["index"]][],
): PlanCase[] {
  return variants.flatMap(([name, f, index]) =>
    [false, true].map((paged) => {
      const filter = { ...f, limit: 50, ...(paged ? { cursor: CURSOR } : {}) } as F;
      return { name: `${route}, ${name}${paged ? ", next page" : ""}`, sqlite: (db) => sqlite(db, filter), pg: (db) => pg(db, filter), index, tables };
    }),
  );
}

const CASES: PlanCase[] = [
  // GET /admin/audit: every filter it offers.
  ...listCases<AuditFilter>("GET /admin/audit", ["audit_log"], ...onBoth(auditListQuery), [
    ["no filter", {}, "audit_created_idx"],
    ["since/until", { since: SINCE, until: UNTIL }, "audit_created_idx"],
    ["entity_type", { entityType: "license" }, "audit_entity_type_idx"],
    ["entity_type + entity_id", { entityType: "license", entityId: "lic-1" }, "audit_entity_idx"],
    ["action", { action: "license.update" }, "audit_action_idx"],
    ["actor_id", { actorId: "key-1" }, "audit_actor_idx"],
    ["product_id", { productId: PRODUCT }, "audit_product_idx"],
    ["product_id + since/until", { productId: PRODUCT, since: SINCE, until: UNTIL }, ["audit_product_idx", "audit_created_idx"]],
  ]),
  // GET /admin/emails.
  ...listCases<EmailFilter>("GET /admin/emails", ["outbox"], emailListQuery, emailListQueryPg, [
    ["no filter", {}, "outbox_kind_created_idx"],
    ["status", { status: "failed" }, "outbox_kind_status_created_idx"],
    ["template", { template: "invite" }, "outbox_kind_topic_created_idx"],
    ["to", { to: "Ann@Example.com" }, "outbox_email_to_idx"],
  ]),
  // GET /admin/events (a product-bound key always filters by its product). A type prefix walks
  // outbox_kind_created_idx and skips the other types (docs/performance.md says so).
  ...listCases<EventFilter>("GET /admin/events", ["outbox"], eventListQuery, eventListQueryPg, [
    ["no filter", {}, "outbox_kind_created_idx"],
    ["since/until", { since: SINCE, until: UNTIL }, "outbox_kind_created_idx"],
    ["type", { type: "license.created" }, "outbox_kind_topic_created_idx"],
    ["type prefix", { typePrefix: "license." }, "outbox_kind_created_idx"],
    ["product_id", { productId: PRODUCT }, "outbox_event_product_idx"],
    ["product_id + type", { productId: PRODUCT, type: "license.created" }, ["outbox_event_product_idx", "outbox_kind_topic_created_idx"]],
  ]),
  // GET /admin/webhooks/:id/deliveries.
  ...listCases<DeliveryFilter>("GET /admin/webhooks/:id/deliveries", ["webhook_deliveries"], ...onBoth(deliveryListQuery), [
    ["no filter", { endpointId: PRODUCT }, "webhook_deliveries_endpoint_idx"],
    ["status", { endpointId: PRODUCT, status: "failed" }, "webhook_deliveries_endpoint_status_idx"],
    ["event_type", { endpointId: PRODUCT, eventType: "license.created" }, "webhook_deliveries_endpoint_type_idx"],
  ]),
  // GET /admin/sessions (only live sessions: the expired ones are pruned within the hour).
  ...listCases<SessionFilter>("GET /admin/sessions", ["sessions"], ...onBoth(sessionListQuery), [
    ["no filter", { aliveAt: UNTIL }, "sessions_created_idx"],
    ["user_id", { aliveAt: UNTIL, userId: PRODUCT }, "sessions_user_idx"],
  ]),
  // GET /admin/users. A search (a substring) walks the order's index and skips what does not match.
  ...listCases<UserFilter>("GET /admin/users", ["users"], ...onBoth(userListQuery), [
    ["no filter", {}, "users_created_idx"],
    ["role", { role: "support" }, "users_role_idx"],
    ["admins", { role: "admins" }, "users_admins_idx"],
    ["search", { search: "example" }, "users_created_idx"],
  ]),
  // GET /admin/products/:id/releases: newest first by semver (version_key), keyset by version key. A
  // channel alone walks the product's releases and skips the other channels (a handful).
  ...[
    ["no filter", {}, "releases_product_version_key_uq"],
    ["status", { status: "published" }, "releases_feed_idx"],
    ["channel", { channel: "beta" }, ["releases_product_version_key_uq", "releases_feed_idx"]],
    ["next page", { afterKey: "0000000001.0000000002.0000000003" }, "releases_product_version_key_uq"],
  ].map(
    ([name, f, index]): PlanCase => ({
      name: `GET /admin/products/:id/releases, ${String(name)}`,
      ...onBothCase((d) => releaseListQuery(d, { productId: PRODUCT, limit: 50, ...(f as Partial<ReleaseFilter>) })),
      index: index as PlanCase["index"],
      tables: ["releases"],
    }),
  ),
  // The feeds and /license/download: a product's published releases in a channel chain, newest first
  // by version key, with the platform's artifact; one index range in version order, stopped at LIMIT.
  // The statement is prepared with placeholders; here they are filled as a feed request fills them.
  ...[null, new Date("2026-11-01T00:00:00.000Z")].map(
    (publishedBefore): PlanCase => ({
      name: `GET /releases/:slug/feed.*, /license/download: the feed${publishedBefore ? ", support cutoff" : ""}`,
      ...onBothCase((d) => {
        const q = feedQuery(d).toSQL();
        const values = feedParams({ productId: PRODUCT, channels: ["dev", "alpha", "beta", "stable"], platform: "linux-x64", limit: 20, publishedBefore });
        return { toSQL: () => ({ sql: q.sql, params: fillPlaceholders(q.params, values) }) };
      }),
      index: "releases_feed_idx",
      tables: ["releases", "artifacts"],
    }),
  ),
  // A license's own rows (no LIMIT: as many as its plan allows), each one index range in the order shown.
  ...[null, { t: Date.UTC(2026, 10, 21), id: "0193a000-0000-7000-8000-000000000000" }].map(
    (cursor): PlanCase => ({
      name: `GET /admin/licenses/:id(/activations), POST /portal/activations: a page of the license's activations${cursor ? ", after a cursor" : ""}`,
      sqlite: (db) => activationsOfLicenseQuery(db, PRODUCT, { limit: 101, cursor }),
      pg: (db) => activationsOfLicenseQueryPg(db, PRODUCT, { limit: 101, cursor }),
      index: "activations_license_created_idx",
      tables: ["activations"],
    }),
  ),
  ...[false, true].flatMap((removed) =>
    [null, { t: Date.UTC(2026, 10, 21), id: "0193a000-0000-7000-8000-000000000000" }].map(
    (cursor): PlanCase => ({
      name: `GET /admin/licenses/:id/seats, POST /portal/seats: a page of the license's seats${removed ? ", removed ones too" : ""}${cursor ? ", after a cursor" : ""}`,
      sqlite: (db) => seatsOfLicenseQuery(sqliteQueryDialect({ db, sqlite: db.$client }), PRODUCT, removed, { limit: 51, cursor }),
      pg: (db) => seatsOfLicenseQuery(pgQueryDialect({ db }), PRODUCT, removed, { limit: 51, cursor }),
      index: "seats_license_created_idx",
      tables: ["seats"],
    }),
    ),
  ),
  {
    name: "GET /portal/licenses: the signed-in user's accepted seats",
    sqlite: (db) => acceptedSeatsQuery(sqliteQueryDialect({ db, sqlite: db.$client }), PRODUCT),
    pg: (db) => acceptedSeatsQuery(pgQueryDialect({ db }), PRODUCT),
    index: "seats_user_idx",
    tables: ["seats"],
  },
  {
    name: "GET /portal/licenses, a later page: the user's accepted seats after the cursor",
    sqlite: (db) => acceptedSeatsQuery(sqliteQueryDialect({ db, sqlite: db.$client }), PRODUCT, { after: { at: new Date(SINCE), id: PRODUCT }, limit: 51 }),
    pg: (db) => acceptedSeatsQuery(pgQueryDialect({ db }), PRODUCT, { after: { at: new Date(SINCE), id: PRODUCT }, limit: 51 }),
    index: "seats_user_idx",
    tables: ["seats"],
  },
  ...[false, true].map(
    (later): PlanCase => ({
      name: `GET /portal/licenses: the licenses the user owns${later ? ", a later page" : ""}`,
      sqlite: (db) => licensesOwnedQuery(sqliteQueryDialect({ db, sqlite: db.$client }), "owner@example.com", { after: later ? { at: new Date(SINCE), id: PRODUCT } : undefined, limit: 51 }),
      pg: (db) => licensesOwnedQuery(pgQueryDialect({ db }), "owner@example.com", { after: later ? { at: new Date(SINCE), id: PRODUCT } : undefined, limit: 51 }),
      index: "licenses_email_lower_idx",
      tables: ["licenses"],
    }),
  ),
  {
    name: "GET /admin/licenses/:id/offline-activations",
    ...onBothCase((d) => offlineActivationsOfLicenseQuery(d, PRODUCT)),
    index: "offline_activations_license_created_idx",
    tables: ["offline_activations"],
  },
  {
    name: "GET /admin/licenses/:id/billing: the license's payments",
    ...onBothCase((d) => paymentsOfLicenseQuery(d, PRODUCT)),
    index: "payments_license_idx",
    tables: ["payments"],
  },
];

forEachEngine("admin list query plans", (_engine, open) => {
  let o: Opened | null = null;
  afterEach(async () => {
    await o?.close();
    o = null;
  });

  test("every admin list statement reads its page by an index, without a sort", async () => {
    o = await open();
    if (o.pg) await realisticDeliveryStatistics(o.pg.sql);
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

// The pruning passes (prune-history, prune-sessions, prune-abuse, prune-idempotency, expire-floating):
// each batch's statements, recorded as the repositories run them (on SQLite through a drizzle that
// logs every statement, over the same connection; on PostgreSQL through postgres.js's debug hook),
// then EXPLAINed one by one. A batch must find its rows by an index, never by scanning the table.
const PRUNED_TABLES = [
  "sessions",
  "sign_in_codes",
  "idempotency_keys",
  "brute_force_state",
  "rate_limit_counters",
  "floating_sessions",
  "outbox",
  "webhook_deliveries",
  "stripe_events",
  "meter_queue",
];

interface Recorded {
  sql: string;
  params: unknown[];
}

/** Runs `batches` with repositories whose every statement is recorded; returns the statements. */
async function recordStatements(o: Opened, batches: (repos: Repos, limiter: RateLimiter) => Promise<unknown>): Promise<Recorded[]> {
  const seen: Recorded[] = [];
  const logger = { logQuery: (sql: string, params: unknown[]) => void seen.push({ sql, params }) };
  if (o.sqlite) {
    const handle = { ...o.sqlite, db: drizzleSqlite({ client: o.sqlite.sqlite, schema: sqliteSchema, logger }) as typeof o.sqlite.db };
    await batches(createSqliteRepos(handle), createSqliteRateLimiter(handle));
    return seen;
  }
  // PostgreSQL: postgres.js's debug hook sees every statement, drizzle's and raw SQL alike.
  const pg = o.pg!;
  const options = pg.sql.options as unknown as { debug?: (conn: number, sql: string, params: unknown[]) => void };
  options.debug = (_conn, sql, params) => void seen.push({ sql, params });
  try {
    await batches(createPgRepos(pg) as Repos, createPgRateLimiter(pg));
  } finally {
    options.debug = undefined;
  }
  return seen;
}

async function explainRecorded(o: Opened, r: Recorded, opts: { noSort?: boolean } = {}): Promise<string> {
  if (o.sqlite) {
    const rows = o.sqlite.sqlite.query(`EXPLAIN QUERY PLAN ${r.sql}`).all(...(r.params as never[])) as { detail: string }[];
    return rows.map((p) => p.detail).join("\n");
  }
  const plan = await o.pg!.sql.begin(async (tx) => {
    await tx.unsafe("SET LOCAL enable_seqscan = off");
    if (opts.noSort) await tx.unsafe("SET LOCAL enable_sort = off");
    return (await tx.unsafe(`EXPLAIN ${r.sql}`, r.params as never[])) as unknown as { "QUERY PLAN": string }[];
  });
  return plan.map((p) => p["QUERY PLAN"]).join("\n");
}

forEachEngine("pruning pass query plans", (_engine, open) => {
  let o: Opened | null = null;
  afterEach(async () => {
    await o?.close();
    o = null;
  });

  test("every pruning batch finds its rows by an index", async () => {
    o = await open();
    const now = new Date("2026-11-22T10:00:00.000Z");
    const recorded = await recordStatements(o, async (repos, limiter) => {
      await repos.sessions.pruneExpired(now, 10);
      await repos.signInCodes.pruneExpired(now, 10);
      await repos.idempotency.prune(now, 10);
      await repos.bruteForce.prune(now, 10);
      await limiter.prune(now.getTime(), 10);
      await repos.floating.expire(now, 10);
      await repos.outbox.pruneFinished(now, 10);
      await repos.webhooks.pruneFinishedDeliveries(now, 10);
      await repos.payments.pruneEvents(now, 10);
      await repos.meterQueue.pruneFinished(now, 10);
    });
    const statements = recorded.filter((r) => /^\s*(select|delete|update|with)\b/i.test(r.sql));
    // Every table was pruned by at least one recorded statement.
    for (const table of PRUNED_TABLES) expect(statements.some((r) => r.sql.includes(table)), table).toBe(true);
    const failures: string[] = [];
    for (const r of statements) {
      const plan = await explainRecorded(o, r);
      if (process.env.KEYWARD_SHOW_PLANS) console.log(`${r.sql}\n${plan}\n`);
      const scans = PRUNED_TABLES.filter((t) => (o!.sqlite ? new RegExp(`SCAN ${t}\\b(?! USING)`) : new RegExp(`Seq Scan on ${t}\\b`)).test(plan));
      if (scans.length > 0) failures.push(`${r.sql}\n${plan}`);
    }
    expect(failures).toEqual([]);
  });
});

// The delivery worker and the metered-billing sync: each claim of due work reads a bounded batch
// by an index in claim order, whatever the backlog of due or finished rows.
forEachEngine("job claim query plans", (_engine, open) => {
  let o: Opened | null = null;
  afterEach(async () => {
    await o?.close();
    o = null;
  });

  test("every claim of due work reads its rows by an index in claim order", async () => {
    o = await open();
    const now = new Date("2026-11-22T10:00:00.000Z");
    const endpoint = `INSERT INTO webhook_endpoints (id, url, description, events, enabled, secret_encrypted, created_at, updated_at)
      VALUES ('${PRODUCT}', 'https://example.com/hook', '', '["*"]', ${o.sqlite ? "1" : "true"}, 'x', ${o.sqlite ? "0" : "now()"}, ${o.sqlite ? "0" : "now()"})`;
    if (o.sqlite) o.sqlite.sqlite.exec(endpoint);
    else await o.pg!.sql.unsafe(endpoint);
    const recorded = await recordStatements(o, async (repos) => {
      await repos.outbox.claimDue({ now, limit: 10, leaseUntil: now, kinds: ["event", "email"] });
      await claimDueDeliveries(repos, { now, limit: 10, leaseUntil: now });
      await repos.meterQueue.claimDue(now, now, 10);
    });
    const statements = recorded.filter((r) => /^\s*(select|delete|update|with)\b/i.test(r.sql));
    for (const table of ["outbox", "webhook_deliveries", "meter_queue"]) expect(statements.some((r) => r.sql.includes(table)), table).toBe(true);
    const failures: string[] = [];
    for (const r of statements) {
      const plan = await explainRecorded(o, r, { noSort: true });
      if (process.env.KEYWARD_SHOW_PLANS) console.log(`${r.sql}\n${plan}\n`);
      const scan = ["outbox", "webhook_deliveries", "meter_queue"].some((t) =>
        (o!.sqlite ? new RegExp(`SCAN ${t}\\b(?! USING)`) : new RegExp(`Seq Scan on ${t}\\b`)).test(plan),
      );
      // In claim order straight from the index: no sort of the due backlog (a long outage's worth).
      const sorted = o.sqlite ? plan.includes("TEMP B-TREE") : /\bSort\b/.test(plan);
      if (scan || sorted) failures.push(`${r.sql}\n${plan}`);
    }
    expect(failures).toEqual([]);
  });
});
