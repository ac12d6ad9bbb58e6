import { table, text, index, uniqueIndex, primaryKey, ts, bigint } from "../dialect/sqlite";
import { products } from "./catalog";

export const RELEASE_CHANNELS = ["stable", "beta", "alpha", "dev"] as const;
export const RELEASE_STATUSES = ["draft", "published", "yanked"] as const;
export const PLATFORMS = [
  "darwin-arm64",
  "darwin-x64",
  "windows-arm64",
  "windows-x64",
  "linux-arm64",
  "linux-x64",
  "linux-armhf",
] as const;
export const ARTIFACT_STATUSES = ["pending", "finalized"] as const;

export const releases = table(
  "releases",
  {
    id: text("id").primaryKey(),
    productId: text("product_id")
      .notNull()
      .references(() => products.id, { onDelete: "restrict" }),
    /** Semantic version as given (spec: "Release and artifact"). */
    version: text("version").notNull(),
    /**
     * Byte-comparable encoding of the version's semver precedence (src/modules/releases/domain.ts
     * versionSortKey): ORDER BY version_key DESC is "newest by semver", prerelease-aware, served by
     * an index instead of sorting in JS.
     */
    versionKey: text("version_key").notNull(),
    channel: text("channel", { enum: RELEASE_CHANNELS }).notNull(),
    notes: text("notes").notNull().default(""),
    minimumOsVersion: text("minimum_os_version"),
    status: text("status", { enum: RELEASE_STATUSES }).notNull(),
    yankReason: text("yank_reason"),
    /** Set once at publish and kept across yank/unyank: the support cutoff compares it (spec rule 6). */
    publishedAt: ts("published_at"),
    yankedAt: ts("yanked_at"),
    createdAt: ts("created_at").notNull(),
    updatedAt: ts("updated_at").notNull(),
  },
  (t) => [
    uniqueIndex("releases_product_version_uq").on(t.productId, t.version),
    // Equal precedence (versions differing only in build metadata) would make "newest" ambiguous.
    uniqueIndex("releases_product_version_key_uq").on(t.productId, t.versionKey),
    // Feed and download resolution: walk one product's published releases newest-first by semver,
    // filtering channel and publish time from the index itself, and stop after LIMIT rows.
    index("releases_feed_idx").on(t.productId, t.status, t.versionKey, t.channel, t.publishedAt),
  ],
);

export const artifacts = table(
  "artifacts",
  {
    id: text("id").primaryKey(),
    releaseId: text("release_id")
      .notNull()
      .references(() => releases.id, { onDelete: "cascade" }),
    platform: text("platform", { enum: PLATFORMS }).notNull(),
    filename: text("filename").notNull(),
    contentType: text("content_type").notNull(),
    /** Size the admin announced when adding the artifact; finalize refuses an object of another size. */
    declaredSize: bigint("declared_size").notNull(),
    storageKey: text("storage_key").notNull().unique(),
    status: text("status", { enum: ARTIFACT_STATUSES }).notNull(),
    // Computed server-side at finalize by streaming the stored object (never taken from the client).
    sha256: text("sha256"),
    fileSize: bigint("file_size"),
    /** BLAKE2b-512 (hex): the minisign prehash, kept so publish need not hash the file again. */
    blake2b512: text("blake2b512"),
    // Written at publish.
    edSignature: text("ed_signature"),
    minisignSignature: text("minisign_signature"),
    signingKid: text("signing_kid"),
    createdAt: ts("created_at").notNull(),
    finalizedAt: ts("finalized_at"),
  },
  (t) => [uniqueIndex("artifacts_release_platform_uq").on(t.releaseId, t.platform)],
);
