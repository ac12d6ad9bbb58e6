// Pure release rules (DECISIONS: Releases and storage): state transitions, channel fallback, the
// index-friendly version sort key, the support-window cutoff. No I/O, no clock.
import { AppError } from "../../shared/errors";
import { SEMVER_PATTERN } from "../../shared/semver";
import type { Artifact, ArtifactSignatureRecord, Channel, Release, ReleaseStatus } from "./repo";

const SEMVER = new RegExp(SEMVER_PATTERN);

/**
 * Channel fallback chains (DECISIONS): a channel also sees every more stable channel. A beta user is
 * offered a newer stable release over an older beta, so the chain is a set, ordered by semver later.
 */
export const CHANNEL_FALLBACK: Readonly<Record<Channel, readonly Channel[]>> = {
  stable: ["stable"],
  beta: ["beta", "stable"],
  alpha: ["alpha", "beta", "stable"],
  dev: ["dev", "alpha", "beta", "stable"],
};

const NUM_WIDTH = 16; // Number.MAX_SAFE_INTEGER has 16 digits; parseSemver refuses anything larger.

/**
 * Encodes semver precedence (semver.org §11) as a string whose byte order (SQLite BINARY collation)
 * equals version order, so "newest first" is an index scan:
 *   MAJOR.MINOR.PATCH zero-padded to 16 digits each; then "~" for a release, or "-" + prerelease
 *   identifiers for a prerelease ("~" > "-": a release outranks its prereleases). Identifiers are
 *   joined by " " (lower than any identifier byte, so a shorter identifier list sorts first); a
 *   numeric identifier is "0" + its digit count (3 digits) + digits (numeric order, and below every
 *   alphanumeric one), an alphanumeric identifier is "1" + itself (ASCII order). Build metadata is
 *   ignored, as precedence ignores it. Throws on a non-semver string (callers validate first).
 */
export function versionSortKey(version: string): string {
  const m = SEMVER.exec(version);
  if (!m) throw new AppError("VALIDATION_ERROR", { details: { fields: { version: "not a semantic version" } } });
  const core = [m[1]!, m[2]!, m[3]!].map((n) => n.padStart(NUM_WIDTH, "0")).join(".");
  if (!m[4]) return `${core}~`;
  const ids = m[4].split(".").map((id) => (/^\d+$/.test(id) ? `0${String(id.length).padStart(3, "0")}${id}` : `1${id}`));
  return `${core}-${ids.join(" ")}`;
}

/**
 * Sparkle compares `sparkle:version` with CFBundleVersion and drops everything after the first "-"
 * (update-formats.md §1.4, §0.5), so the appcast carries MAJOR.MINOR.PATCH there and the full
 * version in shortVersionString; prereleases are told apart by their channel.
 */
export function sparkleVersion(version: string): string {
  const m = SEMVER.exec(version);
  if (!m) throw new AppError("VALIDATION_ERROR", { details: { fields: { version: "not a semantic version" } } });
  return `${m[1]}.${m[2]}.${m[3]}`;
}

/** Spec rule 6: with support_until set, only releases published strictly before it are covered. */
export function coveredBySupport(release: Pick<Release, "publishedAt">, supportUntil: Date | null): boolean {
  if (supportUntil === null) return true;
  return release.publishedAt !== null && release.publishedAt.getTime() < supportUntil.getTime();
}

/**
 * Object keys of an artifact (issue 8, point 3: a published artifact cannot be swapped).
 *   final:   releases/<product>/<release>/<artifact>/<filename> — what downloads serve and publish
 *            signs; written only by finalize (moved there from the staging key) while the release is
 *            a draft, so no presigned URL, leaked or not, ever targets it.
 *   staging: uploads/<product>/<release>/<artifact>/<filename> — the only key a presigned upload URL
 *            targets. Artifacts added before this layout were uploaded straight to the final key;
 *            finalize still accepts their bytes there (no migration needed).
 * The filename ends both keys so storage URLs (and Sparkle's suggested download name) keep it.
 */
export const FINAL_PREFIX = "releases/";
export const STAGING_PREFIX = "uploads/";

export function finalKeyFor(a: Pick<Artifact, "id" | "filename">, release: Pick<Release, "id" | "productId">): string {
  return `${FINAL_PREFIX}${release.productId}/${release.id}/${a.id}/${a.filename}`;
}

export function stagingKeyFor(storageKey: string): string {
  return STAGING_PREFIX + (storageKey.startsWith(FINAL_PREFIX) ? storageKey.slice(FINAL_PREFIX.length) : storageKey);
}

/** The artifact id a release object key names, or null for a key outside the two layouts above. */
export function artifactIdOfKey(key: string): string | null {
  if (!key.startsWith(FINAL_PREFIX) && !key.startsWith(STAGING_PREFIX)) return null;
  const parts = key.split("/");
  return parts.length === 5 ? parts[3]! : null;
}

/**
 * May bytes be written to an artifact's object key (the local driver's upload route asks)? Only
 * while the artifact is pending in a draft: once finalized, its upload URL is refused. S3 cannot
 * refuse a presigned PUT before it expires, which is why the URL targets the staging key only.
 */
export function assertUploadOpen(artifact: Pick<Artifact, "status">, release: Pick<Release, "status">): void {
  if (release.status !== "draft") throw refuse("upload", release.status, `The release is ${release.status}; its artifacts can no longer be uploaded.`);
  if (artifact.status === "finalized") {
    throw new AppError("INVALID_TRANSITION", {
      message: "The artifact is finalized; its upload URL no longer accepts uploads. Add the artifact again to replace it.",
      details: { from: "finalized", action: "upload" },
    });
  }
}

function refuse(action: string, from: ReleaseStatus, message?: string): AppError {
  return new AppError("INVALID_TRANSITION", {
    message: message ?? `Cannot ${action} a release that is ${from}.`,
    details: { from, action },
  });
}

/** Drafts are the only editable releases: a published artifact's bytes and signatures are fixed. */
export function assertDraft(release: Pick<Release, "status">, action: string): void {
  if (release.status !== "draft") throw refuse(action, release.status, `Only draft releases can be changed (${action}); this one is ${release.status}.`);
}

/**
 * Publish precondition (spec "Release": invisible until fully uploaded): a draft with at least one
 * artifact, every artifact finalized (hashed server-side).
 */
export function assertPublishable(release: Pick<Release, "status">, artifacts: readonly Pick<Artifact, "platform" | "status">[]): void {
  if (release.status !== "draft") throw refuse("publish", release.status, `The release is already ${release.status}.`);
  if (artifacts.length === 0) {
    throw new AppError("CONFLICT", { message: "A release needs at least one artifact before it can be published." });
  }
  const pending = artifacts.filter((a) => a.status !== "finalized").map((a) => a.platform);
  if (pending.length > 0) {
    throw new AppError("CONFLICT", {
      message: "Every artifact must be uploaded and finalized before publishing.",
      details: { pending_platforms: pending },
    });
  }
}

/**
 * The write rules below are decided in the verbs' units of work (service.ts), on the release as its
 * lock (ReleaseRepo.lock) holds it: every write to a release and to its artifacts takes that lock
 * first, so each sees the rows as the previous one left them.
 */

/** Deleting a release: drafts only; a published release is yanked instead. */
export function assertDeletable(release: Pick<Release, "status">): void {
  if (release.status !== "draft") throw refuse("delete", release.status, `Only draft releases can be deleted; this one is ${release.status}. Yank it instead.`);
}

/** Adding (or replacing) an artifact: drafts only. */
export function assertArtifactsOpen(release: Pick<Release, "status">): void {
  if (release.status !== "draft") throw refuse("add_artifact", release.status, `Artifacts can only be added to draft releases; this one is ${release.status}.`);
}

/**
 * Recording an artifact's digest: only while its release is a draft, and only for the object that
 * was hashed (`hashedKey`): an artifact replaced meanwhile (a new storage key) keeps its own state.
 */
export function assertFinalizable(release: Pick<Release, "status">, artifact: Pick<Artifact, "storageKey">, hashedKey: string): void {
  if (release.status !== "draft") throw refuse("finalize", release.status, `Artifacts of a ${release.status} release cannot be finalized again.`);
  if (artifact.storageKey !== hashedKey) throw new AppError("CONFLICT", { message: "The artifact was replaced while it was being finalized." });
}

/**
 * Publish's commit: the release is still a draft (of concurrent publishes the first to commit wins;
 * the others are told it is already published), and its artifacts are exactly the ones signed, each
 * finalized with the digest its signature covers. Signing ran outside the transaction (it streams
 * the files): refusing when the artifact set or any artifact's bytes changed meanwhile means a
 * signature always covers what is served.
 */
export function assertSignedAsStored(
  release: Pick<Release, "status">,
  stored: readonly Pick<Artifact, "id" | "status" | "blake2b512">[],
  signatures: readonly Pick<ArtifactSignatureRecord, "artifactId" | "blake2b512">[],
): void {
  if (release.status !== "draft") throw refuse("publish", release.status, `The release is already ${release.status}.`);
  const signed = new Map(signatures.map((s) => [s.artifactId, s]));
  const unchanged = stored.length === signatures.length && stored.every((a) => a.status === "finalized" && signed.get(a.id)?.blake2b512 === a.blake2b512);
  if (!unchanged) throw new AppError("CONFLICT", { message: "The release's artifacts changed while it was being published; publish again." });
}

export function yank(release: Pick<Release, "status">, reason: string, at: Date): Pick<Release, "status" | "yankReason" | "yankedAt"> {
  if (release.status !== "published") throw refuse("yank", release.status);
  return { status: "yanked", yankReason: reason, yankedAt: at };
}

/** Unyank restores visibility; published_at is kept, so the support cutoff is unchanged. */
export function unyank(release: Pick<Release, "status">): Pick<Release, "status" | "yankReason" | "yankedAt"> {
  if (release.status !== "yanked") throw refuse("unyank", release.status);
  return { status: "published", yankReason: null, yankedAt: null };
}
