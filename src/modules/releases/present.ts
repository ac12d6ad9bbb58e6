import type { PresignedRequest } from "../storage/storage";
import type { Artifact, ReleaseWithArtifacts } from "./repo";

const iso = (d: Date | null) => (d ? d.toISOString() : null);

// Explicit fields only: storage keys stay internal (they are not URLs and reveal the bucket layout).
export function presentArtifact(a: Artifact) {
  return {
    id: a.id,
    release_id: a.releaseId,
    platform: a.platform,
    filename: a.filename,
    content_type: a.contentType,
    size: a.declaredSize,
    status: a.status,
    sha256: a.sha256,
    file_size: a.fileSize,
    blake2b512: a.blake2b512,
    ed_signature: a.edSignature,
    minisign_signature: a.minisignSignature,
    signing_kid: a.signingKid,
    created_at: a.createdAt.toISOString(),
    finalized_at: iso(a.finalizedAt),
  };
}

export function presentRelease(r: ReleaseWithArtifacts) {
  return {
    id: r.id,
    product_id: r.productId,
    version: r.version,
    channel: r.channel,
    notes: r.notes,
    minimum_os_version: r.minimumOsVersion,
    status: r.status,
    yank_reason: r.yankReason,
    published_at: iso(r.publishedAt),
    yanked_at: iso(r.yankedAt),
    created_at: r.createdAt.toISOString(),
    updated_at: r.updatedAt.toISOString(),
    artifacts: r.artifacts.map(presentArtifact),
  };
}

export function presentUpload(p: PresignedRequest) {
  return { url: p.url, method: "PUT" as const, headers: p.headers, expires_at: p.expiresAt.toISOString() };
}
