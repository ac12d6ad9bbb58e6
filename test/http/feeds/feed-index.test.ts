// The feed must stay fast with a long release history (10,000 published releases, limit 20): the
// query walks releases_feed_idx in version order and stops at LIMIT — no full scan, no sort.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createTestApp, sqliteOnlyTest, testEngine, type TestApp } from "../../support/app";
import { makeProduct } from "../../support/factories";
import { fillPlaceholders } from "drizzle-orm";
import { sqliteQueryDialect } from "../../../src/db/dialect/query.sqlite";
import { feedParams, feedQuery } from "../../../src/modules/releases/repo.sql";
import { versionSortKey } from "../../../src/modules/releases/domain";
import type { Channel } from "../../../src/modules/releases/repo";

let t: TestApp;
const N = 10_000;
const CHANNELS: Channel[] = ["stable", "beta", "alpha", "dev"];

// SQLite's query plan and a bulk seed through its own statements: the PostgreSQL feed query has its
// own contract suite (test/contract).
beforeAll(async () => {
  if (testEngine() !== "sqlite") return;
  t = await createTestApp();
  const product = await makeProduct(t.deps, { slug: "big" });
  // Bulk seed straight into SQLite: the workflow is covered elsewhere; here only the query matters.
  const db = t.sqlite.sqlite;
  const rel = db.prepare(
    "INSERT INTO releases (id, product_id, version, version_key, channel, notes, status, published_at, created_at, updated_at) VALUES (?, ?, ?, ?, ?, '', 'published', ?, ?, ?)",
  );
  const art = db.prepare(
    "INSERT INTO artifacts (id, release_id, platform, filename, content_type, declared_size, storage_key, status, sha256, file_size, blake2b512, ed_signature, minisign_signature, signing_kid, created_at) VALUES (?, ?, 'linux-x64', 'a.bin', 'application/octet-stream', 1, ?, 'finalized', 'x', 1, 'x', 'x', 'x', 'k', 0)",
  );
  db.transaction(() => {
    for (let i = 0; i < N; i++) {
      const version = `${Math.floor(i / 100)}.${i % 100}.0`;
      const id = crypto.randomUUID();
      rel.run(id, product.id, version, versionSortKey(version), CHANNELS[i % 4]!, i, i, i);
      art.run(crypto.randomUUID(), id, `k/${id}`);
    }
  })();

});
afterAll(() => t?.close());

sqliteOnlyTest("query plan: index range on releases_feed_idx in version order, no temp b-tree sort, artifact by unique index", () => {
  // The repository's own statement (repo.sql.ts feedQuery), its placeholders filled as a feed fills them.
  const { sql, params } = feedQuery(sqliteQueryDialect(t.sqlite)).toSQL();
  const values = feedParams({ productId: "p", channels: ["dev", "alpha", "beta", "stable"], platform: "linux-x64", limit: 20, publishedBefore: new Date(1) });
  const plan = t.sqlite.sqlite.query(`EXPLAIN QUERY PLAN ${sql}`).all(...(fillPlaceholders(params, values) as never[])) as { detail: string }[];
  const details = plan.map((p) => p.detail).join("\n");
  expect(details).toContain("releases_feed_idx");
  expect(details).toContain("artifacts_release_platform_uq");
  expect(details).not.toContain("TEMP B-TREE");
  expect(details).not.toMatch(/SCAN (releases|artifacts)\b(?! USING)/);
});

sqliteOnlyTest("10,000 releases: the feed returns the 20 newest for the chain", async () => {
  const res = await t.request("GET", "/api/v1/releases/big/feed.json?platform=linux-x64");
  expect(res.status).toBe(200);
  expect(res.body).toHaveLength(20);
  // Stable releases are i ≡ 0 (mod 4): the newest is i = 9996 → 99.96.0.
  expect(res.body[0].version).toBe("99.96.0");
  expect(res.body[1].version).toBe("99.92.0");
  const dev = await t.request("GET", "/api/v1/releases/big/feed.json?platform=linux-x64&channel=dev&limit=100");
  expect(dev.body).toHaveLength(100);
  expect(dev.body[0].version).toBe("99.99.0");
});
