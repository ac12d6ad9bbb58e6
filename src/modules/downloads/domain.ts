// Pure download rules: the stable per-artifact URL that feeds embed, and how a license key is read
// from a redirect request.

/**
 * Feeds never embed presigned URLs: feeds are cached, presigned URLs expire (DECISIONS: Releases and
 * storage). This stable Keyward URL answers 302 to a fresh short-lived storage URL on every request.
 * The path mirrors the route in ./index.ts under the /api/v1 prefix (src/app.ts API_PREFIX).
 * For `licensed` products the caller's key is carried along so clients that cannot add headers to
 * downloads (Sparkle, WinSparkle) still present it.
 */
export function artifactDownloadUrl(baseUrl: string, slug: string, artifactId: string, licenseKey?: string | null): string {
  const url = new URL(`${baseUrl}/api/v1/releases/${encodeURIComponent(slug)}/download/${artifactId}`);
  if (licenseKey) url.searchParams.set("license_key", licenseKey);
  return url.toString();
}

/** `Authorization: License <key>` (DECISIONS), else the `license_key` query parameter; null when absent. */
export function licenseKeyFrom(authorization: string | null, query: string | undefined): string | null {
  if (authorization) {
    const m = /^License\s+(\S+)\s*$/i.exec(authorization);
    if (m) return m[1]!;
  }
  const q = query?.trim();
  return q ? q : null;
}
