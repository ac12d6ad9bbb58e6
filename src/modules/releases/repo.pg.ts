import { and, eq, inArray, isNotNull, lt, sql, type SQL } from "drizzle-orm";
import type { PgHandle, PgExecutor } from "../../db/pg";
import { rethrowConstraint } from "../../db/errors";
import { artifacts, products, releases } from "../../db/schema-pg";
import { AppError } from "../../shared/errors";
import { writeEffectsPg } from "../outbox/write.pg";
import type { Artifact, Release, ReleaseFilter, ReleaseRepo, ReleaseWithArtifacts } from "./repo";

type ReleaseRow = typeof releases.$inferSelect;
type ArtifactRow = typeof artifacts.$inferSelect;
const toRelease = (r: ReleaseRow): Release => ({ ...r });
const toArtifact = (a: ArtifactRow): Artifact => ({ ...a });

// SQLite compares text byte by byte; PostgreSQL text comparison follows the database collation, under
// which version keys ("0000000001.…~", "…-1rc 0001…") and platform names would not sort as bytes.
// Every comparison and ORDER BY of those columns says COLLATE "C" (byte order).
const versionKeyC = sql`${releases.versionKey} COLLATE "C"`;
const platformC = sql`${artifacts.platform} COLLATE "C"`;

/** A release and its artifacts (ordered by platform) in one round trip; `forUpdate` locks the release row. */
async function readRelease(tx: PgExecutor, where: SQL, opts: { forUpdate?: boolean } = {}): Promise<ReleaseWithArtifacts | null> {
  const q = tx
    .select({ r: releases, a: artifacts })
    .from(releases)
    .leftJoin(artifacts, eq(artifacts.releaseId, releases.id))
    .where(where)
    .orderBy(platformC);
  const rows = opts.forUpdate ? await q.for("update", { of: releases }) : await q;
  if (rows.length === 0) return null;
  return { ...toRelease(rows[0]!.r), artifacts: rows.flatMap((row) => (row.a ? [toArtifact(row.a)] : [])) };
}

// Feeds are cached per (product, release generation): every change to published releases bumps it
// inside its own transaction, so no node can serve a feed older than what is committed.
const bumpGeneration = (tx: PgExecutor, productId: string) =>
  tx
    .update(products)
    .set({ releaseGeneration: sql`${products.releaseGeneration} + 1` })
    .where(eq(products.id, productId));

const feedColumns = {
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
};

/** GET /admin/products/:id/releases' page of releases (exported for the query-plan test). */
export function releaseListQueryPg(db: PgHandle["db"], f: ReleaseFilter) {
  const where: SQL[] = [eq(releases.productId, f.productId)];
  if (f.status) where.push(eq(releases.status, f.status));
  if (f.channel) where.push(eq(releases.channel, f.channel));
  if (f.afterKey !== undefined) where.push(lt(versionKeyC, f.afterKey));
  return db
    .select()
    .from(releases)
    .where(and(...where))
    .orderBy(sql`${versionKeyC} DESC`)
    .limit(f.limit + 1);
}

export function createReleaseRepoPg(handle: PgHandle): ReleaseRepo {
  const { db } = handle;

  return {
    async create(release, effects) {
      try {
        return await db.transaction(async (tx) => {
          await tx.insert(releases).values(release);
          await writeEffectsPg(tx, effects);
          return release;
        });
      } catch (e) {
        rethrowConstraint(e, {
          unique: `Version ${release.version} (or one of equal precedence) already exists for this product.`,
          foreignKey: "Unknown product.",
        });
      }
    },
    findById: (id) => readRelease(db, eq(releases.id, id)),
    findByVersion: (productId, version) => readRelease(db, and(eq(releases.productId, productId), eq(releases.version, version))!),
    async list(f) {
      const rows = await releaseListQueryPg(db, f);
      const page = rows.slice(0, f.limit);
      const ids = page.map((r) => r.id);
      const byRelease = new Map<string, Artifact[]>();
      if (ids.length) {
        for (const a of await db.select().from(artifacts).where(inArray(artifacts.releaseId, ids)).orderBy(platformC)) {
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
      const [row] = await db
        .select({ r: releases, a: artifacts })
        .from(artifacts)
        .innerJoin(releases, eq(releases.id, artifacts.releaseId))
        .where(eq(artifacts.id, id));
      return row ? { artifact: toArtifact(row.a), release: toRelease(row.r) } : null;
    },
    async mutate(id, decide, at, effects) {
      return db.transaction(async (tx) => {
        // The release row lock serialises this with every other write to the release and its artifacts.
        const before = await readRelease(tx, eq(releases.id, id), { forUpdate: true });
        if (!before) return null;
        const patch = decide(before);
        await tx
          .update(releases)
          .set({ ...patch, updatedAt: at })
          .where(eq(releases.id, id));
        await bumpGeneration(tx, before.productId);
        await writeEffectsPg(tx, effects(before, patch));
        return readRelease(tx, eq(releases.id, id));
      });
    },
    async deleteDraft(id, effects) {
      return db.transaction(async (tx) => {
        const current = await readRelease(tx, eq(releases.id, id), { forUpdate: true });
        if (!current) return null;
        if (current.status !== "draft") {
          throw new AppError("INVALID_TRANSITION", {
            message: `Only draft releases can be deleted; this one is ${current.status}. Yank it instead.`,
            details: { from: current.status, action: "delete" },
          });
        }
        // Artifacts go by ON DELETE CASCADE.
        await tx.delete(releases).where(and(eq(releases.id, id), eq(releases.status, "draft")));
        await writeEffectsPg(tx, effects);
        return current.artifacts.map((a) => a.storageKey);
      });
    },
    async putArtifact(artifact, effects) {
      return db.transaction(async (tx) => {
        const [release] = await tx
          .select({ status: releases.status })
          .from(releases)
          .where(eq(releases.id, artifact.releaseId))
          .for("update");
        if (!release) throw new AppError("NOT_FOUND", { message: "Release not found." });
        if (release.status !== "draft") {
          throw new AppError("INVALID_TRANSITION", {
            message: `Artifacts can only be added to draft releases; this one is ${release.status}.`,
            details: { from: release.status, action: "add_artifact" },
          });
        }
        const [replaced] = await tx
          .delete(artifacts)
          .where(and(eq(artifacts.releaseId, artifact.releaseId), eq(artifacts.platform, artifact.platform)))
          .returning();
        await tx.insert(artifacts).values(artifact);
        await tx.update(releases).set({ updatedAt: artifact.createdAt }).where(eq(releases.id, artifact.releaseId));
        const previous = replaced ? toArtifact(replaced) : null;
        await writeEffectsPg(tx, effects(previous));
        return { replaced: previous };
      });
    },
    async finalizeArtifact(id, storageKey, digest, at, effects) {
      return db.transaction(async (tx) => {
        // Locks the release: a concurrent publish either committed first (status is no longer draft)
        // or waits for this finalize, and then checks the digest written here.
        const [row] = await tx
          .select({ a: artifacts, status: releases.status })
          .from(artifacts)
          .innerJoin(releases, eq(releases.id, artifacts.releaseId))
          .where(eq(artifacts.id, id))
          .for("update", { of: releases });
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
        const [finalized] = await tx
          .update(artifacts)
          .set({ status: "finalized", sha256: digest.sha256, fileSize: digest.fileSize, blake2b512: digest.blake2b512, finalizedAt: at })
          .where(eq(artifacts.id, id))
          .returning();
        await writeEffectsPg(tx, effects);
        return toArtifact(finalized!);
      });
    },
    async publish(id, signatures, at, effects) {
      return db.transaction(async (tx) => {
        // The conditional flip is the arbiter between concurrent publishes (also across nodes): exactly
        // one UPDATE matches status = 'draft'; the others wait for its row lock, then match 0 rows.
        const flipped = await tx
          .update(releases)
          .set({ status: "published", publishedAt: at, updatedAt: at })
          .where(and(eq(releases.id, id), eq(releases.status, "draft")))
          .returning({ id: releases.id });
        if (flipped.length === 0) {
          const [current] = await tx.select({ status: releases.status }).from(releases).where(eq(releases.id, id));
          if (!current) throw new AppError("NOT_FOUND", { message: "Release not found." });
          throw new AppError("INVALID_TRANSITION", {
            message: `The release is already ${current.status}.`,
            details: { from: current.status, action: "publish" },
          });
        }
        // Signing ran outside this transaction (it streams the files); refuse if the artifact set
        // or any artifact's bytes changed meanwhile, so a signature always covers what is served.
        const current = await tx.select().from(artifacts).where(eq(artifacts.releaseId, id));
        const signed = new Map(signatures.map((s) => [s.artifactId, s]));
        const unchanged =
          current.length === signatures.length &&
          current.every((a) => a.status === "finalized" && signed.get(a.id)?.blake2b512 === a.blake2b512);
        if (!unchanged) {
          throw new AppError("CONFLICT", { message: "The release's artifacts changed while it was being published; publish again." });
        }
        for (const s of signatures) {
          await tx
            .update(artifacts)
            .set({ edSignature: s.edSignature, minisignSignature: s.minisignSignature, signingKid: s.signingKid })
            .where(eq(artifacts.id, s.artifactId));
        }
        const published = (await readRelease(tx, eq(releases.id, id)))!;
        await bumpGeneration(tx, published.productId);
        await writeEffectsPg(tx, effects);
        return published;
      });
    },
    async feed(q) {
      const rows = await db
        .select(feedColumns)
        .from(releases)
        .innerJoin(
          artifacts,
          and(eq(artifacts.releaseId, releases.id), eq(artifacts.platform, q.platform), eq(artifacts.status, "finalized")),
        )
        .where(
          and(
            eq(releases.productId, q.productId),
            eq(releases.status, "published"),
            inArray(releases.channel, [...q.channels]),
            q.publishedBefore ? lt(releases.publishedAt, q.publishedBefore) : isNotNull(releases.publishedAt),
          ),
        )
        .orderBy(sql`${versionKeyC} DESC`)
        .limit(q.limit);
      return rows.map((r) => ({
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
      }));
    },
  };
}
