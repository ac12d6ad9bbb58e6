// ReleaseRepo on both engines, written once against the query seam (db/dialect/query.ts): release
// and artifact rows, the release's lock and the feed's read; the verbs (service.ts) decide and write
// them with their audit rows in one unit of work.
//
// Version keys ("0000000001.…~", "…-1rc 0001…") and platform names are compared and ordered by
// their bytes on both engines (d.byteOrder): under a linguistic collation (a PostgreSQL database
// created with en_US) they would not sort as semver and as the platform list.
import { and, desc, eq, inArray, lt, sql, type SQL } from "drizzle-orm";
import type { QueryDialect } from "../../db/dialect/query";
import { rethrowConstraint } from "../../db/errors";
import type { Artifact, FeedEntry, FeedQuery, Release, ReleaseFilter, ReleaseRepo, ReleaseWithArtifacts } from "./repo";

type Tables = QueryDialect["tables"];
type ReleaseRow = Tables["releases"]["$inferSelect"];
type ArtifactRow = Tables["artifacts"]["$inferSelect"];
const toRelease = (r: ReleaseRow): Release => ({ ...r });
const toArtifact = (a: ArtifactRow): Artifact => ({ ...a });

/** Room for the whole fallback chain; shorter chains repeat their last channel (same set). */
const CHANNEL_SLOTS = 4;
/**
 * "No cutoff" as an instant both engines store and compare: later than any real publish time. The
 * feed is one statement shape with or without a cutoff (prepared once); a release is published
 * with its published_at set, so `published_at < NO_CUTOFF` holds for every published release.
 */
const NO_CUTOFF = new Date("9999-12-31T23:59:59.999Z");

/** GET /admin/products/:id/releases' page of releases (exported for the query-plan test). */
export function releaseListQuery(d: QueryDialect, f: ReleaseFilter) {
  const { releases } = d.tables;
  const where: SQL[] = [eq(releases.productId, f.productId)];
  if (f.status) where.push(eq(releases.status, f.status));
  if (f.channel) where.push(eq(releases.channel, f.channel));
  if (f.afterKey !== undefined) where.push(lt(d.byteOrder(releases.versionKey), f.afterKey));
  return d.db
    .select()
    .from(releases)
    .where(and(...where))
    .orderBy(desc(d.byteOrder(releases.versionKey)))
    .limit(f.limit + 1);
}

/**
 * The feed statement, shared by feeds, /license/download and the query-plan tests
 * (test/http/feeds/feed-index.test.ts, test/contract/admin-query-plans): it must walk
 * releases_feed_idx in version_key order and stop at LIMIT, never sort the product's whole history.
 * Its values are placeholders (feedParams fills them): the repository prepares it once. Flat
 * columns: drizzle maps nested table objects more slowly. On SQLite the SQLite twin's raw SQL read
 * a 20-entry feed of 10,000 releases in ~140–290 µs, this statement in ~190–390 µs (same machine,
 * alternating runs); bench/feed.ts does not see the difference (rendered feeds are cached: ratio
 * 0.95 here, 1.13 with the twin), so the statement is not written twice. On PostgreSQL, prepared,
 * it is faster than the twin's (~1.3–1.5 ms against ~1.9–2.2 ms).
 */
export function feedQuery(d: QueryDialect) {
  const { releases, artifacts } = d.tables;
  return d.db
    .select({
      id: releases.id,
      productId: releases.productId,
      version: releases.version,
      versionKey: releases.versionKey,
      channel: releases.channel,
      notes: releases.notes,
      minimumOsVersion: releases.minimumOsVersion,
      status: releases.status,
      yankReason: releases.yankReason,
      publishedAt: releases.publishedAt,
      yankedAt: releases.yankedAt,
      createdAt: releases.createdAt,
      updatedAt: releases.updatedAt,
      aId: artifacts.id,
      aPlatform: artifacts.platform,
      aFilename: artifacts.filename,
      aContentType: artifacts.contentType,
      aDeclaredSize: artifacts.declaredSize,
      aStorageKey: artifacts.storageKey,
      aStatus: artifacts.status,
      aSha256: artifacts.sha256,
      aFileSize: artifacts.fileSize,
      aBlake2b512: artifacts.blake2b512,
      aEdSignature: artifacts.edSignature,
      aMinisignSignature: artifacts.minisignSignature,
      aSigningKid: artifacts.signingKid,
      aCreatedAt: artifacts.createdAt,
      aFinalizedAt: artifacts.finalizedAt,
    })
    .from(releases)
    .innerJoin(artifacts, and(eq(artifacts.releaseId, releases.id), eq(artifacts.platform, sql.placeholder("platform")), eq(artifacts.status, "finalized")))
    .where(
      and(
        eq(releases.productId, sql.placeholder("productId")),
        eq(releases.status, "published"),
        inArray(
          releases.channel,
          Array.from({ length: CHANNEL_SLOTS }, (_, i) => sql.placeholder(`c${i}`)),
        ),
        // The instant goes through the column's own encoding (epoch ms on SQLite, timestamptz on PostgreSQL).
        lt(releases.publishedAt, sql.param(sql.placeholder("before"), releases.publishedAt)),
      ),
    )
    .orderBy(desc(d.byteOrder(releases.versionKey)))
    .limit(sql.placeholder("limit"));
}

/** The feed statement's values for a query. */
export function feedParams(q: FeedQuery): Record<string, unknown> {
  const params: Record<string, unknown> = {
    productId: q.productId,
    platform: q.platform,
    before: q.publishedBefore ?? NO_CUTOFF,
    limit: q.limit,
  };
  for (let i = 0; i < CHANNEL_SLOTS; i++) params[`c${i}`] = q.channels[Math.min(i, q.channels.length - 1)];
  return params;
}

type FeedRow = Awaited<ReturnType<typeof feedQuery>>[number];

function feedEntry(r: FeedRow): FeedEntry {
  return {
    release: {
      id: r.id,
      productId: r.productId,
      version: r.version,
      versionKey: r.versionKey,
      channel: r.channel,
      notes: r.notes,
      minimumOsVersion: r.minimumOsVersion,
      status: r.status,
      yankReason: r.yankReason,
      publishedAt: r.publishedAt,
      yankedAt: r.yankedAt,
      createdAt: r.createdAt,
      updatedAt: r.updatedAt,
    },
    artifact: {
      id: r.aId,
      releaseId: r.id,
      platform: r.aPlatform,
      filename: r.aFilename,
      contentType: r.aContentType,
      declaredSize: r.aDeclaredSize,
      storageKey: r.aStorageKey,
      status: r.aStatus,
      sha256: r.aSha256,
      fileSize: r.aFileSize,
      blake2b512: r.aBlake2b512,
      edSignature: r.aEdSignature,
      minisignSignature: r.aMinisignSignature,
      signingKid: r.aSigningKid,
      createdAt: r.aCreatedAt,
      finalizedAt: r.aFinalizedAt,
    },
  };
}

export function createReleaseRepo(d: QueryDialect): ReleaseRepo {
  const { db } = d;
  const { artifacts, products, releases } = d.tables;
  // Prepared (the SQLite twin prepared its reads by id and the feed): building a drizzle statement
  // costs more than running it (on SQLite a release with its artifacts: ~80 µs prepared, 500–700 µs
  // built on every call), and these run on every admin release request (findById, the lock of every
  // write), every download (findArtifact, findByVersion) and every feed document not in the cache.
  const feedStmt = d.prepared("release_feed", () => feedQuery(d));
  /** A release and its artifacts (in platform byte order) in one statement. */
  const withArtifacts = (where: SQL) =>
    db
      .select({ r: releases, a: artifacts })
      .from(releases)
      .leftJoin(artifacts, eq(artifacts.releaseId, releases.id))
      .where(where)
      .orderBy(d.byteOrder(artifacts.platform));
  const releaseById = d.prepared("release_by_id", () => withArtifacts(eq(releases.id, sql.placeholder("id"))));
  const releaseByVersion = d.prepared("release_by_version", () =>
    withArtifacts(and(eq(releases.productId, sql.placeholder("productId")), eq(releases.version, sql.placeholder("version")))!),
  );
  const artifactById = d.prepared("artifact_by_id", () =>
    db
      .select({ r: releases, a: artifacts })
      .from(artifacts)
      .innerJoin(releases, eq(releases.id, artifacts.releaseId))
      .where(eq(artifacts.id, sql.placeholder("id"))),
  );
  // The release row alone (PostgreSQL refuses FOR UPDATE on the nullable side of an outer join);
  // its artifacts are read after it, under the lock every writer of them takes first.
  const lockRelease = d.prepared("release_lock", () => d.forUpdate(db.select().from(releases).where(eq(releases.id, sql.placeholder("id"))), "update"));
  const artifactsOfRelease = d.prepared("artifacts_of_release", () =>
    db.select().from(artifacts).where(eq(artifacts.releaseId, sql.placeholder("releaseId"))).orderBy(d.byteOrder(artifacts.platform)),
  );
  const artifactsOf = async (releaseId: string) => (await artifactsOfRelease({ releaseId })).map(toArtifact);
  const oneRelease = (rows: { r: ReleaseRow; a: ArtifactRow | null }[]): ReleaseWithArtifacts | null =>
    rows.length === 0 ? null : { ...toRelease(rows[0]!.r), artifacts: rows.flatMap((row) => (row.a ? [toArtifact(row.a)] : [])) };
  // The increment is relative, so concurrent changes on other nodes each move it.
  const bumpGeneration = (productId: string) =>
    db
      .update(products)
      .set({ releaseGeneration: sql`${products.releaseGeneration} + 1` })
      .where(eq(products.id, productId));

  return {
    async create(release) {
      try {
        await db.insert(releases).values(release);
        return release;
      } catch (e) {
        rethrowConstraint(e, {
          unique: `Version ${release.version} (or one of equal precedence) already exists for this product.`,
          foreignKey: "Unknown product.",
        });
      }
    },
    async findById(id) {
      return oneRelease(await releaseById({ id }));
    },
    async findByVersion(productId, version) {
      return oneRelease(await releaseByVersion({ productId, version }));
    },
    async list(f) {
      const rows = await releaseListQuery(d, f);
      const page = rows.slice(0, f.limit);
      const ids = page.map((r) => r.id);
      const byRelease = new Map<string, Artifact[]>();
      if (ids.length) {
        for (const a of await db.select().from(artifacts).where(inArray(artifacts.releaseId, ids)).orderBy(d.byteOrder(artifacts.platform))) {
          const list = byRelease.get(a.releaseId) ?? [];
          list.push(toArtifact(a));
          byRelease.set(a.releaseId, list);
        }
      }
      return {
        items: page.map((r) => ({ ...toRelease(r), artifacts: byRelease.get(r.id) ?? [] })),
        hasMore: rows.length > f.limit,
      };
    },
    async findArtifact(id) {
      const [row] = await artifactById({ id });
      return row ? { artifact: toArtifact(row.a), release: toRelease(row.r) } : null;
    },
    async lock(id) {
      const [row] = await lockRelease({ id });
      return row ? { ...toRelease(row), artifacts: await artifactsOf(id) } : null;
    },
    async update(id, patch, at) {
      const [row] = await db
        .update(releases)
        .set({ ...patch, updatedAt: at })
        .where(eq(releases.id, id))
        .returning();
      await bumpGeneration(row!.productId);
      return toRelease(row!);
    },
    async delete(id) {
      await db.delete(releases).where(eq(releases.id, id));
    },
    async putArtifact(artifact) {
      const [replaced] = await db
        .delete(artifacts)
        .where(and(eq(artifacts.releaseId, artifact.releaseId), eq(artifacts.platform, artifact.platform)))
        .returning();
      await db.insert(artifacts).values(artifact);
      await db.update(releases).set({ updatedAt: artifact.createdAt }).where(eq(releases.id, artifact.releaseId));
      return replaced ? toArtifact(replaced) : null;
    },
    async finalizeArtifact(id, digest, at) {
      const [row] = await db
        .update(artifacts)
        .set({ status: "finalized", sha256: digest.sha256, fileSize: digest.fileSize, blake2b512: digest.blake2b512, finalizedAt: at })
        .where(eq(artifacts.id, id))
        .returning();
      return toArtifact(row!);
    },
    async publish(id, signatures, at) {
      const [row] = await db
        .update(releases)
        .set({ status: "published", publishedAt: at, updatedAt: at })
        .where(eq(releases.id, id))
        .returning();
      for (const s of signatures) {
        await db
          .update(artifacts)
          .set({ edSignature: s.edSignature, minisignSignature: s.minisignSignature, signingKid: s.signingKid })
          .where(eq(artifacts.id, s.artifactId));
      }
      await bumpGeneration(row!.productId);
      return { ...toRelease(row!), artifacts: await artifactsOf(id) };
    },
    async feed(q) {
      return (await feedStmt(feedParams(q))).map(feedEntry);
    },
  };
}
