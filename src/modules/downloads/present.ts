// The download routes' answers: the licensed download (a short-lived URL and what it points at) and
// the stable artifact URL's redirect.
import type { PresignedRequest } from "../storage/storage";
import type { ResolvedDownload } from "./service";

export function presentDownload({ release, artifact, presigned }: ResolvedDownload) {
  return {
    url: presigned.url,
    expires_at: presigned.expiresAt.toISOString(),
    version: release.version,
    platform: artifact.platform,
    sha256: artifact.sha256!,
    file_size: artifact.fileSize!,
  };
}

/** A redirect, not an envelope: updaters follow it to the bytes. Never cached: the target expires. */
export function redirectToStorage(presigned: PresignedRequest): Response {
  return new Response(null, { status: 302, headers: { location: presigned.url, "cache-control": "no-store" } });
}
