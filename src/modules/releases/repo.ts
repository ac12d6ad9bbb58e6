import type { Effects } from "../outbox/effects";
import type { ARTIFACT_STATUSES, PLATFORMS, RELEASE_CHANNELS, RELEASE_STATUSES } from "../../db/schema/releases";

export type Channel = (typeof RELEASE_CHANNELS)[number];
export type ReleaseStatus = (typeof RELEASE_STATUSES)[number];
export type Platform = (typeof PLATFORMS)[number];
export type ArtifactStatus = (typeof ARTIFACT_STATUSES)[number];

export interface Release {
  id: string;
  productId: string;
  version: string;
  /** versionSortKey(version): byte order = semver precedence. */
  versionKey: string;
  channel: Channel;
  notes: string;
  minimumOsVersion: string | null;
  status: ReleaseStatus;
  yankReason: string | null;
  publishedAt: Date | null;
  yankedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface Artifact {
  id: string;
  releaseId: string;
  platform: Platform;
  filename: string;
  contentType: string;
  declaredSize: number;
  storageKey: string;
  status: ArtifactStatus;
  sha256: string | null;
  fileSize: number | null;
  /** hex */
  blake2b512: string | null;
  edSignature: string | null;
  minisignSignature: string | null;
  signingKid: string | null;
  createdAt: Date;
  finalizedAt: Date | null;
}

export interface ReleaseWithArtifacts extends Release {
  artifacts: Artifact[];
}

/** One published release and its artifact for the requested platform. */
export interface FeedEntry {
  release: Release;
  artifact: Artifact;
}

export type ReleasePatch = Partial<Pick<Release, "channel" | "notes" | "minimumOsVersion" | "status" | "yankReason" | "yankedAt">>;

export interface ArtifactDigest {
  sha256: string;
  fileSize: number;
  blake2b512: string;
}

export interface ArtifactSignatureRecord {
  artifactId: string;
  /** The digest the signature was computed over; publish refuses if the artifact changed since. */
  blake2b512: string;
  edSignature: string;
  minisignSignature: string;
  signingKid: string;
}

export interface FeedQuery {
  productId: string;
  channels: readonly Channel[];
  platform: Platform;
  limit: number;
  /** Only releases with published_at strictly before this instant (support cutoff); null = no cutoff. */
  publishedBefore: Date | null;
}

export interface ReleaseFilter {
  productId: string;
  status?: ReleaseStatus;
  channel?: Channel;
  /** Continue after this version key (keyset). */
  afterKey?: string;
  limit: number;
}

export interface ReleaseRepo {
  /** Throws CONFLICT when the product already has this version (or one of equal precedence). */
  create(release: Release, effects: Effects): Promise<Release>;
  findById(id: string): Promise<ReleaseWithArtifacts | null>;
  findByVersion(productId: string, version: string): Promise<ReleaseWithArtifacts | null>;
  /** Newest first by semver; `afterKey` continues after that version key. */
  list(filter: ReleaseFilter): Promise<{
    items: ReleaseWithArtifacts[];
    hasMore: boolean;
  }>;
  findArtifact(id: string): Promise<{ artifact: Artifact; release: Release } | null>;
  /**
   * Atomic read-decide-write on a release: `decide` sees the current row (with artifacts) inside the
   * write transaction and returns the patch or throws an AppError. Null when the release is missing.
   */
  mutate(
    id: string,
    decide: (current: ReleaseWithArtifacts) => ReleasePatch,
    at: Date,
    effects: (before: ReleaseWithArtifacts, patch: ReleasePatch) => Effects,
  ): Promise<ReleaseWithArtifacts | null>;
  /** Deletes a draft and its artifact rows; returns their storage keys. Null when missing; INVALID_TRANSITION if not a draft. */
  deleteDraft(id: string, effects: Effects): Promise<string[] | null>;
  /**
   * Adds the artifact to a draft, replacing the one for the same platform. Returns the replaced
   * artifact (its stored object is now orphaned). INVALID_TRANSITION when the release is not a draft.
   */
  putArtifact(artifact: Artifact, effects: (replaced: Artifact | null) => Effects): Promise<{ replaced: Artifact | null }>;
  /**
   * Records the server-computed digest, only while the release is a draft and the artifact still
   * has this storage key (a concurrent replacement wins). Null when the artifact is gone.
   */
  finalizeArtifact(id: string, storageKey: string, digest: ArtifactDigest, at: Date, effects: Effects): Promise<Artifact | null>;
  /**
   * ONE transaction: flips draft → published (`UPDATE … WHERE status = 'draft'`), stores every
   * signature, writes the audit row. Throws INVALID_TRANSITION when the release is no longer a draft
   * (a concurrent publish won) and CONFLICT when its artifacts changed after they were signed.
   */
  publish(id: string, signatures: ArtifactSignatureRecord[], at: Date, effects: Effects): Promise<ReleaseWithArtifacts>;
  /** Published releases with a finalized artifact for the platform, newest first by semver. */
  feed(query: FeedQuery): Promise<FeedEntry[]>;
}
