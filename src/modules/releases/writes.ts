// The release writes' units of work (the verbs in service.ts run each in DataStore.transaction):
// the release locked (every write to a release and to its artifacts takes its lock first, so each
// sees what the previous one left), the rule decided on it (domain.ts), the rows and `effects`
// written, all committed together; a refusal or a throw writes nothing.
import type { Repos } from "../../deps";
import { AppError } from "../../shared/errors";
import type { Effects } from "../outbox/effects";
import { assertArtifactsOpen, assertDeletable, assertFinalizable, assertSignedAsStored } from "./domain";
import type { Artifact, ArtifactDigest, ArtifactSignatureRecord, Release, ReleasePatch, ReleaseWithArtifacts } from "./repo";

const releaseNotFound = () => new AppError("NOT_FOUND", { message: "Release not found." });

type ReleaseUnitRepos = Pick<Repos, "releases" | "outbox">;

/** Stores a new draft and its effects. CONFLICT for a version the product has (or one of equal precedence). */
export async function storeRelease(repos: ReleaseUnitRepos, release: Release, effects: Effects): Promise<Release> {
  const created = await repos.releases.create(release);
  await repos.outbox.writeEffects(effects);
  return created;
}

/**
 * Changes a release: `decide` sees it, with its artifacts, as the lock holds it and returns the
 * patch (or throws an AppError). Bumps the product's release generation. Null when it is missing.
 */
export async function changeRelease(
  repos: ReleaseUnitRepos,
  id: string,
  decide: (current: ReleaseWithArtifacts) => ReleasePatch,
  at: Date,
  effects: (before: ReleaseWithArtifacts, patch: ReleasePatch) => Effects,
): Promise<ReleaseWithArtifacts | null> {
  const before = await repos.releases.lock(id);
  if (!before) return null;
  const patch = decide(before);
  const after = await repos.releases.update(id, patch, at);
  await repos.outbox.writeEffects(effects(before, patch));
  return { ...after, artifacts: before.artifacts };
}

/** Deletes a draft and its artifact rows; returns their storage keys. Null when missing; INVALID_TRANSITION if not a draft. */
export async function removeDraft(repos: ReleaseUnitRepos, id: string, effects: Effects): Promise<string[] | null> {
  const current = await repos.releases.lock(id);
  if (!current) return null;
  assertDeletable(current);
  await repos.releases.delete(id);
  await repos.outbox.writeEffects(effects);
  return current.artifacts.map((a) => a.storageKey);
}

/**
 * Adds the artifact to a draft, replacing the one for the same platform. Returns the replaced
 * artifact (its stored object is now orphaned). NOT_FOUND without the release, INVALID_TRANSITION
 * when it is not a draft.
 */
export async function storeArtifact(
  repos: ReleaseUnitRepos,
  artifact: Artifact,
  effects: (replaced: Artifact | null) => Effects,
): Promise<{ replaced: Artifact | null }> {
  const release = await repos.releases.lock(artifact.releaseId);
  if (!release) throw releaseNotFound();
  assertArtifactsOpen(release);
  const replaced = await repos.releases.putArtifact(artifact);
  await repos.outbox.writeEffects(effects(replaced));
  return { replaced };
}

/**
 * Records the server-computed digest, only while the release is a draft and the artifact still has
 * the storage key that was hashed (a concurrent replacement wins). Null when the artifact is gone.
 * A concurrent publish either committed first (the release is no longer a draft) or waits for this
 * unit, and then checks the digest written here.
 */
export async function recordArtifactDigest(
  repos: ReleaseUnitRepos,
  id: string,
  storageKey: string,
  digest: ArtifactDigest,
  at: Date,
  effects: Effects,
): Promise<Artifact | null> {
  // An artifact never moves to another release: its release, found first, is the one to lock.
  const found = await repos.releases.findArtifact(id);
  if (!found) return null;
  const release = await repos.releases.lock(found.release.id);
  const artifact = release?.artifacts.find((a) => a.id === id);
  if (!release || !artifact) return null;
  assertFinalizable(release, artifact, storageKey);
  const finalized = await repos.releases.finalizeArtifact(id, digest, at);
  await repos.outbox.writeEffects(effects);
  return finalized;
}

/**
 * Publish's commit: flips the draft to published, stores every signature, bumps the generation and
 * writes `effects` of the release as published. Of concurrent publishes of one release exactly one
 * commits (each takes the release's lock, then sees whether it is still a draft); the others get
 * INVALID_TRANSITION and write nothing. CONFLICT when the artifacts changed after they were signed.
 */
export async function commitPublish(
  repos: ReleaseUnitRepos,
  id: string,
  signatures: ArtifactSignatureRecord[],
  at: Date,
  effects: (published: ReleaseWithArtifacts) => Effects,
): Promise<ReleaseWithArtifacts> {
  const current = await repos.releases.lock(id);
  if (!current) throw releaseNotFound();
  assertSignedAsStored(current, current.artifacts, signatures);
  const published = await repos.releases.publish(id, signatures, at);
  await repos.outbox.writeEffects(effects(published));
  return published;
}
