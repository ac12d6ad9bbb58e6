import { and, desc, eq, inArray, lt, sql, type SQL } from "drizzle-orm";
import { lift, immediate, lazyStatement, type DbHandle } from "../../db/client";
import { rethrowConstraint } from "../../db/errors";
import { artifacts, products, releases } from "../../db/schema";
import { AppError } from "../../shared/errors";
import { writeEffects } from "../outbox/write.sqlite";
import type { Artifact, Release, ReleaseFilter, ReleaseRepo, ReleaseWithArtifacts } from "./repo";

type ReleaseRow = typeof releases.$inferSelect;
type ArtifactRow = typeof artifacts.$inferSelect;
const toRelease = (r: ReleaseRow): Release => ({ ...r });
const toArtifact = (a: ArtifactRow): Artifact => ({ ...a });

/** Room for the whole fallback chain; shorter chains repeat their last channel (same set). */
const CHANNEL_SLOTS = 4;
/** "No cutoff" as a comparable instant (ms): later than any real publish time. */
const NO_CUTOFF = Number.MAX_SAFE_INTEGER;

/**
 * The feed query, shared by feeds, /license/download and the query-plan test
 * (test/http/feeds/feed-index.test.ts): it must walk releases_feed_idx in version_key order and stop
 * at LIMIT, never sort the product's whole history. Raw SQL with explicit columns: drizzle's mapping
 * of two nested table objects cost ~115 µs of a 20-entry feed's 172 µs here (the feed-scaling bench).
 * Parameters: $productId, $platform, $c0..$c3 (the channel chain), $before (ms), $limit.
 */
export const FEED_SQL = `
  SELECT r.id, r.product_id, r.version, r.version_key, r.channel, r.notes, r.minimum_os_version, r.status,
         r.yank_reason, r.published_at, r.yanked_at, r.created_at, r.updated_at,
         a.id AS a_id, a.platform AS a_platform, a.filename AS a_filename, a.content_type AS a_content_type,
         a.declared_size AS a_declared_size, a.storage_key AS a_storage_key, a.status AS a_status,
         a.sha256 AS a_sha256, a.file_size AS a_file_size, a.blake2b512 AS a_blake2b512,
         a.ed_signature AS a_ed_signature, a.minisign_signature AS a_minisign_signature,
         a.signing_kid AS a_signing_kid, a.created_at AS a_created_at, a.finalized_at AS a_finalized_at
    FROM releases r
    JOIN artifacts a ON a.release_id = r.id AND a.platform = $platform AND a.status = 'finalized'
   WHERE r.product_id = $productId AND r.status = 'published' AND r.channel IN ($c0, $c1, $c2, $c3)
     AND r.published_at < $before
   ORDER BY r.version_key DESC
   LIMIT $limit`;

interface FeedRow {
  id: string;
  product_id: string;
  version: string;
  version_key: string;
  channel: Release["channel"];
  notes: string;
  minimum_os_version: string | null;
  status: Release["status"];
  yank_reason: string | null;
  published_at: number | null;
  yanked_at: number | null;
  created_at: number;
  updated_at: number;
  a_id: string;
  a_platform: Artifact["platform"];
  a_filename: string;
  a_content_type: string;
  a_declared_size: number;
  a_storage_key: string;
  a_status: Artifact["status"];
  a_sha256: string | null;
  a_file_size: number | null;
  a_blake2b512: string | null;
  a_ed_signature: string | null;
  a_minisign_signature: string | null;
  a_signing_kid: string | null;
  a_created_at: number;
  a_finalized_at: number | null;
}

const date = (ms: number | null) => (ms === null ? null : new Date(ms));

function feedEntry(r: FeedRow): { release: Release; artifact: Artifact } {
  return {
    release: {
      id: r.id,
      productId: r.product_id,
      version: r.version,
      versionKey: r.version_key,
      channel: r.channel,
      notes: r.notes,
      minimumOsVersion: r.minimum_os_version,
      status: r.status,
      yankReason: r.yank_reason,
      publishedAt: date(r.published_at),
      yankedAt: date(r.yanked_at),
      createdAt: new Date(r.created_at),
      updatedAt: new Date(r.updated_at),
    },
    artifact: {
      id: r.a_id,
      releaseId: r.id,
      platform: r.a_platform,
      filename: r.a_filename,
      contentType: r.a_content_type,
      declaredSize: r.a_declared_size,
      storageKey: r.a_storage_key,
      status: r.a_status,
      sha256: r.a_sha256,
      fileSize: r.a_file_size,
      blake2b512: r.a_blake2b512,
      edSignature: r.a_ed_signature,
      minisignSignature: r.a_minisign_signature,
      signingKid: r.a_signing_kid,
      createdAt: new Date(r.a_created_at),
      finalizedAt: date(r.a_finalized_at),
    },
  };
}

/** GET /admin/products/:id/releases' page of releases (exported for the query-plan test). */
export function releaseListQuery(db: DbHandle["db"], f: ReleaseFilter) {
  const where: SQL[] = [eq(releases.productId, f.productId)];
  if (f.status) where.push(eq(releases.status, f.status));
  if (f.channel) where.push(eq(releases.channel, f.channel));
  if (f.afterKey !== undefined) where.push(lt(releases.versionKey, f.afterKey));
  return db
    .select()
    .from(releases)
    .where(and(...where))
    .orderBy(desc(releases.versionKey))
    .limit(f.limit + 1);
}

export function createReleaseRepo(handle: DbHandle): ReleaseRepo {
  const { db } = handle;
  const feedStmt = lazyStatement(() => handle.sqlite.prepare<FeedRow, [Record<string, string | number>]>(FEED_SQL));
  const releaseById = lazyStatement(() => db.select().from(releases).where(eq(releases.id, sql.placeholder("id"))).prepare());
  const artifactsByRelease = lazyStatement(() =>
    db
      .select()
      .from(artifacts)
      .where(eq(artifacts.releaseId, sql.placeholder("releaseId")))
      .orderBy(artifacts.platform)
      .prepare(),
  );

  // Feeds are cached per (product, release generation): every change to published releases bumps it
  // inside its own transaction, so no node can serve a feed older than what is committed.
  const bumpGeneration = (productId: string) =>
    db.update(products).set({ releaseGeneration: sql`${products.releaseGeneration} + 1` }).where(eq(products.id, productId)).run();

  const withArtifacts = (r: ReleaseRow): ReleaseWithArtifacts => ({
    ...toRelease(r),
    artifacts: artifactsByRelease().all({ releaseId: r.id }).map(toArtifact),
  });
  const findById = (id: string) => {
    const r = releaseById().get({ id });
    return r ? withArtifacts(r) : null;
  };

  return {
    async create(release, effects) {
      try {
        return immediate(handle, () => {
          db.insert(releases).values(release).run();
          writeEffects(db, effects);
          return release;
        });
      } catch (e) {
        rethrowConstraint(e, {
          unique: `Version ${release.version} (or one of equal precedence) already exists for this product.`,
          foreignKey: "Unknown product.",
        });
      }
    },
    findById: lift(findById),
    async findByVersion(productId, version) {
      const r = db
        .select()
        .from(releases)
        .where(and(eq(releases.productId, productId), eq(releases.version, version)))
        .get();
      return r ? withArtifacts(r) : null;
    },
    async list(f) {
      const rows = releaseListQuery(db, f).all();
      const page = rows.slice(0, f.limit);
      const ids = page.map((r) => r.id);
      const byRelease = new Map<string, Artifact[]>();
      if (ids.length) {
        for (const a of db.select().from(artifacts).where(inArray(artifacts.releaseId, ids)).orderBy(artifacts.platform).all()) {
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
      const row = db
        .select({ r: releases, a: artifacts })
        .from(artifacts)
        .innerJoin(releases, eq(releases.id, artifacts.releaseId))
        .where(eq(artifacts.id, id))
        .get();
      return row ? { artifact: toArtifact(row.a), release: toRelease(row.r) } : null;
    },
    async mutate(id, decide, at, effects) {
      return immediate(handle, () => {
        const before = findById(id);
        if (!before) return null;
        const patch = decide(before);
        db.update(releases).set({ ...patch, updatedAt: at }).where(eq(releases.id, id)).run();
        bumpGeneration(before.productId);
        writeEffects(db, effects(before, patch));
        return findById(id);
      });
    },
    async deleteDraft(id, effects) {
      return immediate(handle, () => {
        const current = findById(id);
        if (!current) return null;
        if (current.status !== "draft") {
          throw new AppError("INVALID_TRANSITION", {
            message: `Only draft releases can be deleted; this one is ${current.status}. Yank it instead.`,
            details: { from: current.status, action: "delete" },
          });
        }
        // Artifacts go by ON DELETE CASCADE.
        db.delete(releases).where(and(eq(releases.id, id), eq(releases.status, "draft"))).run();
        writeEffects(db, effects);
        return current.artifacts.map((a) => a.storageKey);
      });
    },
    async putArtifact(artifact, effects) {
      return immediate(handle, () => {
        const release = releaseById().get({ id: artifact.releaseId });
        if (!release) throw new AppError("NOT_FOUND", { message: "Release not found." });
        if (release.status !== "draft") {
          throw new AppError("INVALID_TRANSITION", {
            message: `Artifacts can only be added to draft releases; this one is ${release.status}.`,
            details: { from: release.status, action: "add_artifact" },
          });
        }
        const replaced =
          db
            .delete(artifacts)
            .where(and(eq(artifacts.releaseId, artifact.releaseId), eq(artifacts.platform, artifact.platform)))
            .returning()
            .get() ?? null;
        db.insert(artifacts).values(artifact).run();
        db.update(releases).set({ updatedAt: artifact.createdAt }).where(eq(releases.id, artifact.releaseId)).run();
        const previous = replaced ? toArtifact(replaced) : null;
        writeEffects(db, effects(previous));
        return { replaced: previous };
      });
    },
    async finalizeArtifact(id, storageKey, digest, at, effects) {
      return immediate(handle, () => {
        const row = db
          .select({ a: artifacts, status: releases.status })
          .from(artifacts)
          .innerJoin(releases, eq(releases.id, artifacts.releaseId))
          .where(eq(artifacts.id, id))
          .get();
        if (!row) return null;
        if (row.status !== "draft") {
          throw new AppError("INVALID_TRANSITION", {
            message: `Artifacts of a ${row.status} release cannot be finalized again.`,
            details: { from: row.status, action: "finalize" },
          });
        }
        if (row.a.storageKey !== storageKey) {
          throw new AppError("CONFLICT", { message: "The artifact was replaced while it was being finalized." });
        }
        db.update(artifacts)
          .set({ status: "finalized", sha256: digest.sha256, fileSize: digest.fileSize, blake2b512: digest.blake2b512, finalizedAt: at })
          .where(eq(artifacts.id, id))
          .run();
        writeEffects(db, effects);
        return toArtifact(db.select().from(artifacts).where(eq(artifacts.id, id)).get()!);
      });
    },
    async publish(id, signatures, at, effects) {
      return immediate(handle, () => {
        // The conditional flip is the arbiter between concurrent publishes: exactly one UPDATE
        // matches status = 'draft'; every other attempt sees 0 rows and writes nothing.
        const flipped = db
          .update(releases)
          .set({ status: "published", publishedAt: at, updatedAt: at })
          .where(and(eq(releases.id, id), eq(releases.status, "draft")))
          .returning({ id: releases.id })
          .all();
        if (flipped.length === 0) {
          const current = releaseById().get({ id });
          if (!current) throw new AppError("NOT_FOUND", { message: "Release not found." });
          throw new AppError("INVALID_TRANSITION", {
            message: `The release is already ${current.status}.`,
            details: { from: current.status, action: "publish" },
          });
        }
        // Signing ran outside this transaction (it streams the files); refuse if the artifact set
        // or any artifact's bytes changed meanwhile, so a signature always covers what is served.
        const current = artifactsByRelease().all({ releaseId: id });
        const signed = new Map(signatures.map((s) => [s.artifactId, s]));
        const unchanged =
          current.length === signatures.length &&
          current.every((a) => a.status === "finalized" && signed.get(a.id)?.blake2b512 === a.blake2b512);
        if (!unchanged) {
          throw new AppError("CONFLICT", { message: "The release's artifacts changed while it was being published; publish again." });
        }
        for (const s of signatures) {
          db.update(artifacts)
            .set({ edSignature: s.edSignature, minisignSignature: s.minisignSignature, signingKid: s.signingKid })
            .where(eq(artifacts.id, s.artifactId))
            .run();
        }
        const published = findById(id)!;
        bumpGeneration(published.productId);
        writeEffects(db, effects);
        return published;
      });
    },
    async feed(q) {
      const chain = Array.from({ length: CHANNEL_SLOTS }, (_, i) => q.channels[Math.min(i, q.channels.length - 1)]!);
      const params: Record<string, string | number> = {
        productId: q.productId,
        platform: q.platform,
        before: q.publishedBefore ? q.publishedBefore.getTime() : NO_CUTOFF,
        limit: q.limit,
      };
      chain.forEach((c, i) => (params[`c${i}`] = c));
      return feedStmt().all(params).map(feedEntry);
    },
  };
}
