// Admin release workflow (DECISIONS: Releases and storage): draft → artifacts (presigned upload) →
// finalize (server-side hashing) → publish (server-side signing, one atomic flip) → yank/unyank.
// Object storage and signing are network/CPU work and always run outside database transactions.
import type { Deps } from "../../deps";
import { AppError } from "../../shared/errors";
import { newId } from "../../shared/ids";
import { assertProductAccess, type Actor } from "../../shared/actor";
import { signArtifact } from "../release-keys/service";
import type { PresignedRequest } from "../storage/storage";
import { getProduct } from "../products/service";
import type { Effects } from "../outbox/effects";
import { releasePublished, releaseUnyanked, releaseYanked } from "./events";
import { hashingSink, hashStream } from "../../crypto/stream-hash";
import {
  artifactIdOfKey,
  assertDraft,
  assertPublishable,
  assertUploadOpen,
  finalKeyFor,
  stagingKeyFor,
  unyank,
  versionSortKey,
  yank,
} from "./domain";
import type { Artifact, ArtifactSignatureRecord, Channel, Platform, Release, ReleasePatch, ReleaseStatus, ReleaseWithArtifacts } from "./repo";
import { changeRelease, commitPublish, recordArtifactDigest, removeDraft, storeArtifact, storeRelease } from "./writes";

export interface CreateReleaseInput {
  version: string;
  channel?: Channel;
  notes?: string;
  minimumOsVersion?: string | null;
}

export interface AddArtifactInput {
  platform: Platform;
  filename: string;
  contentType: string;
  size: number;
}

const audit = (
  deps: Deps,
  actor: Actor,
  action: string,
  entity: { type: "release" | "artifact"; id: string },
  productId: string,
  changes: Record<string, unknown> | null,
): Effects => ({ audit: { actor, action, entityType: entity.type, entityId: entity.id, productId, changes, at: deps.clock.now() } });

const releaseNotFound = () => new AppError("NOT_FOUND", { message: "Release not found." });
const artifactNotFound = () => new AppError("NOT_FOUND", { message: "Artifact not found." });

function assertStorage(deps: Deps): void {
  if (deps.storage.driver === "none") throw new AppError("STORAGE_DISABLED");
}

/**
 * Objects orphaned by a committed change (deleted draft, replaced artifact), given by final key: the
 * final object and its staging object both go. Removal is best effort.
 */
async function deleteObjects(deps: Deps, finalKeys: readonly string[]): Promise<void> {
  await Promise.all(
    finalKeys.flatMap((k) => [k, stagingKeyFor(k)]).map((key) =>
      deps.storage.delete(key).catch((error: unknown) => deps.logger.warn("could not delete stored object", { key, error })),
    ),
  );
}

export async function createRelease(deps: Deps, actor: Actor, productId: string, input: CreateReleaseInput): Promise<ReleaseWithArtifacts> {
  const product = await getProduct(deps, actor, productId);
  const now = deps.clock.now();
  const release: Release = {
    id: newId(),
    productId: product.id,
    version: input.version,
    versionKey: versionSortKey(input.version),
    channel: input.channel ?? "stable",
    notes: input.notes ?? "",
    minimumOsVersion: input.minimumOsVersion ?? null,
    status: "draft",
    yankReason: null,
    publishedAt: null,
    yankedAt: null,
    createdAt: now,
    updatedAt: now,
  };
  const effects = audit(deps, actor, "release.create", { type: "release", id: release.id }, product.id, {
    version: release.version,
    channel: release.channel,
    minimum_os_version: release.minimumOsVersion,
  });
  const created = await deps.db.transaction(({ repos }) => storeRelease(repos, release, effects));
  return { ...created, artifacts: [] };
}

/** Admin fetch: 404 when missing, 403 PRODUCT_SCOPE_MISMATCH for a bound key's other products. */
export async function getRelease(deps: Deps, actor: Actor, id: string): Promise<ReleaseWithArtifacts> {
  const release = await deps.repos.releases.findById(id);
  if (!release) throw releaseNotFound();
  assertProductAccess(actor, release.productId);
  return release;
}

// Cursor = the last item's version key (unique per product), base64url so it stays opaque. The whole
// key is checked (domain.ts versionSortKey): text after a valid prefix reached the query, and U+0000
// there answered 500 on PostgreSQL.
const VERSION_KEY = /^\d{16}\.\d{16}\.\d{16}(?:~|-[0-9A-Za-z -]+)$/;
function decodeReleaseCursor(raw: string): string {
  const key = Buffer.from(raw, "base64url").toString("utf8");
  if (!VERSION_KEY.test(key) || key.length > 1024) {
    throw new AppError("VALIDATION_ERROR", { details: { fields: { cursor: "invalid cursor" } } });
  }
  return key;
}

export async function listReleases(
  deps: Deps,
  actor: Actor,
  productId: string,
  q: { status?: ReleaseStatus; channel?: Channel; cursor?: string; limit: number },
): Promise<{ items: ReleaseWithArtifacts[]; nextCursor: string | null }> {
  const product = await getProduct(deps, actor, productId);
  const page = await deps.repos.releases.list({
    productId: product.id,
    status: q.status,
    channel: q.channel,
    afterKey: q.cursor ? decodeReleaseCursor(q.cursor) : undefined,
    limit: q.limit,
  });
  const last = page.items[page.items.length - 1];
  return { items: page.items, nextCursor: page.hasMore && last ? Buffer.from(last.versionKey, "utf8").toString("base64url") : null };
}

export async function updateRelease(
  deps: Deps,
  actor: Actor,
  id: string,
  patch: Pick<ReleasePatch, "channel" | "notes" | "minimumOsVersion">,
): Promise<ReleaseWithArtifacts> {
  const release = await getRelease(deps, actor, id);
  return await change(
    deps,
    id,
    (current) => {
      assertDraft(current, "update");
      return patch;
    },
    () => audit(deps, actor, "release.update", { type: "release", id }, release.productId, { ...patch }),
  );
}

/** A change of one release, decided on it as its lock holds it, in its unit of work (writes.ts); 404 when it is gone. */
async function change(
  deps: Deps,
  id: string,
  decide: (current: ReleaseWithArtifacts) => ReleasePatch,
  effects: (before: ReleaseWithArtifacts, patch: ReleasePatch) => Effects,
): Promise<ReleaseWithArtifacts> {
  const updated = await deps.db.transaction(({ repos }) => changeRelease(repos, id, decide, deps.clock.now(), effects));
  if (!updated) throw releaseNotFound();
  return updated;
}

export async function deleteRelease(deps: Deps, actor: Actor, id: string): Promise<void> {
  const release = await getRelease(deps, actor, id);
  const keys = await deps.db.transaction(({ repos }) =>
    removeDraft(repos, id, audit(deps, actor, "release.delete", { type: "release", id }, release.productId, { version: release.version })),
  );
  if (keys === null) throw releaseNotFound();
  await deleteObjects(deps, keys);
}

export async function addArtifact(
  deps: Deps,
  actor: Actor,
  releaseId: string,
  input: AddArtifactInput,
): Promise<{ artifact: Artifact; upload: PresignedRequest }> {
  const release = await getRelease(deps, actor, releaseId);
  assertDraft(release, "add_artifact");
  assertStorage(deps);
  const id = newId();
  const artifact: Artifact = {
    id,
    releaseId,
    platform: input.platform,
    filename: input.filename,
    contentType: input.contentType,
    declaredSize: input.size,
    storageKey: finalKeyFor({ id, filename: input.filename }, release),
    status: "pending",
    sha256: null,
    fileSize: null,
    blake2b512: null,
    edSignature: null,
    minisignSignature: null,
    signingKid: null,
    createdAt: deps.clock.now(),
    finalizedAt: null,
  };
  const { replaced } = await deps.db.transaction(({ repos }) =>
    storeArtifact(repos, artifact, (previous) =>
      audit(deps, actor, "artifact.add", { type: "artifact", id }, release.productId, {
        release_id: releaseId,
        platform: input.platform,
        filename: input.filename,
        content_type: input.contentType,
        size: input.size,
        replaced_artifact_id: previous?.id ?? null,
      }),
    ),
  );
  if (replaced) await deleteObjects(deps, [replaced.storageKey]);
  // The URL targets the staging key only; finalize moves the bytes to the final key (domain.ts).
  const upload = await deps.storage.presignPut(stagingKeyFor(artifact.storageKey), {
    contentType: input.contentType,
    size: input.size,
    expiresInSeconds: deps.config.storage.uploadUrlTtlSeconds,
  });
  return { artifact, upload };
}

/**
 * Moves the uploaded bytes from the staging key to the final key and records sha256, file_size and
 * BLAKE2b-512 of exactly the bytes that landed there, computed here — the client's claims are never
 * trusted (spec "Release and artifact"); `expectedSha256` only guards the upload against corruption.
 * After this, no upload URL can change what downloads serve: URLs only ever target the staging key.
 */
export async function finalizeArtifact(deps: Deps, actor: Actor, artifactId: string, expectedSha256?: string): Promise<Artifact> {
  const found = await deps.repos.releases.findArtifact(artifactId);
  if (!found) throw artifactNotFound();
  const { artifact, release } = found;
  assertProductAccess(actor, release.productId);
  assertDraft(release, "finalize");
  assertStorage(deps);
  const digest = await digestFinalObject(deps, artifact);
  if (expectedSha256 !== undefined && expectedSha256.toLowerCase() !== digest.sha256Hex) {
    throw new AppError("CONFLICT", {
      message: "The uploaded object's SHA-256 does not match expected_sha256.",
      details: { expected_sha256: expectedSha256.toLowerCase(), actual_sha256: digest.sha256Hex },
    });
  }
  const finalized = await deps.db.transaction(({ repos }) =>
    recordArtifactDigest(
      repos,
      artifactId,
      artifact.storageKey,
      { sha256: digest.sha256Hex, fileSize: digest.size, blake2b512: Buffer.from(digest.blake2b512).toString("hex") },
      deps.clock.now(),
      audit(deps, actor, "artifact.finalize", { type: "artifact", id: artifactId }, release.productId, {
        sha256: digest.sha256Hex,
        file_size: digest.size,
      }),
    ),
  );
  if (!finalized) throw artifactNotFound();
  return finalized;
}

const nothingUploaded = (artifactId: string) =>
  new AppError("CONFLICT", { message: "Nothing has been uploaded for this artifact yet.", details: { artifact_id: artifactId } });

function assertDeclaredSize(artifact: Artifact, size: number): void {
  if (size !== artifact.declaredSize) {
    throw new AppError("CONFLICT", {
      message: `The uploaded object is ${size} bytes; ${artifact.declaredSize} were declared.`,
      details: { declared_size: artifact.declaredSize, uploaded_size: size },
    });
  }
}

/**
 * The digest of the artifact's final object, after moving a staged upload there. A pending artifact
 * takes its staged upload when there is one; without one, bytes already at the final key are hashed
 * in place (an artifact uploaded before the staging layout, or a finalize retried after its move).
 * A finalized artifact is re-hashed in place and never takes staged bytes: on S3 a leaked upload URL
 * can still write its staging key, and that must change nothing.
 */
async function digestFinalObject(deps: Deps, artifact: Artifact) {
  const staged = artifact.status === "pending" ? await deps.storage.stat(stagingKeyFor(artifact.storageKey)) : null;
  if (staged) {
    // Refused before moving anything: the staged object stays where a corrected upload replaces it.
    assertDeclaredSize(artifact, staged.size);
    const sink = hashingSink();
    try {
      await deps.storage.move(stagingKeyFor(artifact.storageKey), artifact.storageKey, {
        contentType: artifact.contentType,
        observe: sink.update,
      });
    } catch (e) {
      if ((e as { code?: string }).code === "NOT_FOUND") {
        throw new AppError("CONFLICT", { message: "The upload was moved by a concurrent finalize; finalize again." });
      }
      throw e;
    }
    const digest = sink.digest();
    // A re-upload that landed between stat and move: its bytes are in the final key, and they are
    // what was hashed; the declared size still has to hold.
    assertDeclaredSize(artifact, digest.size);
    return digest;
  }
  const info = await deps.storage.stat(artifact.storageKey);
  if (!info) throw nothingUploaded(artifact.id);
  assertDeclaredSize(artifact, info.size);
  const digest = await hashStream(await deps.storage.read(artifact.storageKey));
  if (digest.size !== artifact.declaredSize) {
    throw new AppError("CONFLICT", { message: "The uploaded object changed while it was being hashed; finalize again." });
  }
  return digest;
}

/**
 * The local driver's upload route asks before streaming a body and again before committing it: a
 * key of a release artifact accepts bytes only while that artifact is pending in a draft (domain
 * assertUploadOpen). Keys outside the release layouts are not the releases module's business.
 */
export async function assertArtifactUploadOpen(deps: Deps, key: string): Promise<void> {
  const artifactId = artifactIdOfKey(key);
  if (artifactId === null) return;
  const found = await deps.repos.releases.findArtifact(artifactId);
  if (!found || (key !== found.artifact.storageKey && key !== stagingKeyFor(found.artifact.storageKey))) {
    throw new AppError("NOT_FOUND", { message: "The artifact this upload URL was issued for no longer exists." });
  }
  assertUploadOpen(found.artifact, found.release);
}

/**
 * Publish (DECISIONS: one atomic step). Signing streams every artifact (bounded memory, outside any
 * transaction); then one unit of work (writes.ts commitPublish) locks the release, checks it is
 * still a draft with the artifacts signed, flips it to published and stores the signatures.
 * Concurrent publishes of one release: exactly one wins; the others get 409 INVALID_TRANSITION
 * ("already published") and write nothing — a retried publish is told the truth rather than handed
 * a success it did not cause.
 */
export async function publishRelease(deps: Deps, actor: Actor, id: string): Promise<ReleaseWithArtifacts> {
  const release = await getRelease(deps, actor, id);
  assertPublishable(release, release.artifacts);
  assertStorage(deps);
  const at = deps.clock.now();
  const timestamp = Math.floor(at.getTime() / 1000);
  const signatures: ArtifactSignatureRecord[] = [];
  // One artifact at a time: memory stays bounded by one stream's buffers, whatever the release size.
  // signArtifact checks that the streamed bytes still hash to the finalize digest (409 otherwise): an
  // object re-uploaded after finalize (its presigned PUT may still be valid) is never signed, since
  // feeds announce the finalized sha256 and size.
  for (const a of release.artifacts) {
    const sig = await signArtifact(deps, release.productId, {
      open: () => deps.storage.read(a.storageKey),
      blake2b512: new Uint8Array(Buffer.from(a.blake2b512!, "hex")),
      filename: a.filename,
      version: release.version,
      timestamp,
    });
    signatures.push({
      artifactId: a.id,
      blake2b512: a.blake2b512!,
      edSignature: sig.edSignature,
      minisignSignature: sig.minisign,
      signingKid: sig.kid,
    });
  }
  return await deps.db.transaction(({ repos }) =>
    commitPublish(repos, id, signatures, at, (published) => ({
      ...audit(deps, actor, "release.publish", { type: "release", id }, release.productId, {
        version: release.version,
        artifacts: signatures.map((s) => ({ artifact_id: s.artifactId, kid: s.signingKid })),
      }),
      events: [releasePublished(published, at)],
    })),
  );
}

export async function yankRelease(deps: Deps, actor: Actor, id: string, reason: string): Promise<ReleaseWithArtifacts> {
  const release = await getRelease(deps, actor, id);
  return await change(
    deps,
    id,
    (current) => yank(current, reason, deps.clock.now()),
    (before, patch) => ({
      ...audit(deps, actor, "release.yank", { type: "release", id }, release.productId, { reason }),
      events: [releaseYanked({ ...before, ...patch }, deps.clock.now())],
    }),
  );
}

export async function unyankRelease(deps: Deps, actor: Actor, id: string): Promise<ReleaseWithArtifacts> {
  const release = await getRelease(deps, actor, id);
  return await change(
    deps,
    id,
    (current) => unyank(current),
    (before, patch) => ({
      ...audit(deps, actor, "release.unyank", { type: "release", id }, release.productId, { previous_reason: before.yankReason }),
      events: [releaseUnyanked({ ...before, ...patch }, deps.clock.now())],
    }),
  );
}
