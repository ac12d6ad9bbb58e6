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

/**
 * Release and artifact rows, no rules: the verbs (service.ts) decide (domain.ts) and write them with
 * their audit rows and events in one unit of work (DataStore.transaction). A write to a release or
 * its artifacts takes the release's lock first. A method of several statements (marked) runs them
 * in the caller's unit; outside a unit each would commit alone. Feeds are cached per (product,
 * release generation): `update` and `publish` bump the product's generation in the same unit, so
 * no node serves a feed older than what is committed.
 */
export interface ReleaseRepo {
  /** Throws CONFLICT when the product already has this version (or one of equal precedence), or is unknown. */
  create(release: Release): Promise<Release>;
  findById(id: string): Promise<ReleaseWithArtifacts | null>;
  findByVersion(productId: string, version: string): Promise<ReleaseWithArtifacts | null>;
  /** Newest first by semver; `afterKey` continues after that version key. */
  list(filter: ReleaseFilter): Promise<{
    items: ReleaseWithArtifacts[];
    hasMore: boolean;
  }>;
  findArtifact(id: string): Promise<{ artifact: Artifact; release: Release } | null>;
  /**
   * The release and its artifacts, its row held until the unit of work ends (PostgreSQL: FOR
   * UPDATE; SQLite: the unit's write lock). Every write to a release and to its artifacts takes it
   * first, so they run one after another, each seeing what the previous one left. null when the
   * release does not exist. Two statements.
   */
  lock(id: string): Promise<ReleaseWithArtifacts | null>;
  /** Writes the patch and updatedAt, bumps the product's release generation; the release as it is now. Two statements. */
  update(id: string, patch: ReleasePatch, at: Date): Promise<Release>;
  /** Deletes the release; its artifact rows go by ON DELETE CASCADE. */
  delete(id: string): Promise<void>;
  /**
   * Adds the artifact to its release, replacing the one for the same platform, and touches the
   * release's updatedAt. Returns the replaced artifact (its stored object is now orphaned). Three
   * statements.
   */
  putArtifact(artifact: Artifact): Promise<Artifact | null>;
  /** Records the server-computed digest: the artifact is finalized at `at`. Returns it as it is now. */
  finalizeArtifact(id: string, digest: ArtifactDigest, at: Date): Promise<Artifact>;
  /**
   * Flips the release to published at `at`, stores every signature, bumps the product's release
   * generation; the release as it is now. Several statements.
   */
  publish(id: string, signatures: ArtifactSignatureRecord[], at: Date): Promise<ReleaseWithArtifacts>;
  /** Published releases with a finalized artifact for the platform, newest first by semver. One statement. */
  feed(query: FeedQuery): Promise<FeedEntry[]>;
}
