// License-gated downloads: POST /license/download (spec rule 6) and the stable feed download URL that
// redirects to a fresh presigned URL (DECISIONS: Releases and storage). Both resolve a release the
// same way and apply the same support-window cutoff.
import type { Deps } from "../../deps";
import { AppError } from "../../shared/errors";
import type { License } from "../licenses/repo";
import { licenseKeyHash } from "../licenses/service";
import { isUsable } from "../licenses/domain";
import { normalizeLicenseKey } from "../../crypto/license-key";
import type { Product } from "../products/repo";
import type { Artifact, Channel, Platform, Release } from "../releases/repo";
import { CHANNEL_FALLBACK, coveredBySupport } from "../releases/domain";
import { productBySlug } from "../feeds/service";
import type { PresignedRequest } from "../storage/storage";

export interface DownloadInput {
  licenseKey: string;
  platform: Platform;
  /** Omitted or empty: the newest release (spec rule 6). */
  version?: string;
  channel: Channel;
}

export interface ResolvedDownload {
  release: Release;
  artifact: Artifact;
  presigned: PresignedRequest;
}

function assertStorage(deps: Deps): void {
  if (deps.storage.driver === "none") throw new AppError("STORAGE_DISABLED");
}

const releaseNotFound = (message = "No published release matches.") => new AppError("RELEASE_NOT_FOUND", { message });
const yanked = (version: string) =>
  new AppError("RELEASE_YANKED", { message: `Version ${version} has been withdrawn.`, details: { version } });
const supportExpired = (supportUntil: Date) =>
  new AppError("SUPPORT_EXPIRED", {
    message: "This release was published after the license's support window ended.",
    details: { support_until: supportUntil.toISOString() },
  });

async function findLicense(deps: Deps, key: string): Promise<License | null> {
  return await deps.repos.licenses.findByKeyHash(licenseKeyHash(deps, normalizeLicenseKey(key)));
}

async function usable(deps: Deps, license: License): Promise<boolean> {
  const plan = await deps.repos.plans.findById(license.planId);
  return isUsable(license, plan?.graceDays ?? 0, deps.clock.now());
}

/** Pinned: that exact version (any channel); latest: newest covered release in the fallback chain. */
async function resolveRelease(
  deps: Deps,
  product: Product,
  q: { platform: Platform; channel: Channel; version?: string },
  supportUntil: Date | null,
): Promise<{ release: Release; artifact: Artifact }> {
  if (q.version) {
    const release = await deps.repos.releases.findByVersion(product.id, q.version);
    // A draft is invisible everywhere (spec "Release"): it answers exactly like a missing version.
    if (!release || release.status === "draft") throw releaseNotFound(`Version ${q.version} is not published.`);
    if (release.status === "yanked") throw yanked(release.version);
    const artifact = release.artifacts.find((a) => a.platform === q.platform && a.status === "finalized");
    if (!artifact) throw releaseNotFound(`Version ${q.version} has no ${q.platform} artifact.`);
    if (!coveredBySupport(release, supportUntil)) throw supportExpired(supportUntil!);
    return { release, artifact };
  }
  const query = { productId: product.id, channels: CHANNEL_FALLBACK[q.channel], platform: q.platform, limit: 1 };
  const [covered] = await deps.repos.releases.feed({ ...query, publishedBefore: supportUntil });
  if (covered) return covered;
  // Releases exist but all were published after support ended: say so rather than "none exist".
  if (supportUntil !== null && (await deps.repos.releases.feed({ ...query, publishedBefore: null })).length > 0) {
    throw supportExpired(supportUntil);
  }
  throw releaseNotFound();
}

async function presign(deps: Deps, artifact: Artifact): Promise<PresignedRequest> {
  return deps.storage.presignGet(artifact.storageKey, {
    expiresInSeconds: deps.config.storage.downloadUrlTtlSeconds,
    filename: artifact.filename,
    contentType: artifact.contentType,
  });
}

/**
 * POST /license/download (spec rule 6): 503 without storage; 404 LICENSE_NOT_FOUND for an unknown
 * key; 403 LICENSE_INACTIVE for an unusable one (the spec names 403 here, unlike verify); then the
 * release resolution above.
 */
export async function licenseDownload(deps: Deps, input: DownloadInput): Promise<ResolvedDownload> {
  assertStorage(deps);
  const license = await findLicense(deps, input.licenseKey);
  if (!license) throw new AppError("LICENSE_NOT_FOUND");
  if (!await usable(deps, license)) throw new AppError("LICENSE_INACTIVE", { message: "The license is not active." });
  const product = await deps.repos.products.findById(license.productId);
  if (!product) throw new AppError("LICENSE_NOT_FOUND");
  const found = await resolveRelease(deps, product, input, license.supportUntil);
  return { ...found, presigned: await presign(deps, found.artifact) };
}

/**
 * GET /releases/:slug/download/:artifact_id — the stable URL feeds embed. Open products: anyone.
 * Licensed products: a usable key of this product, and the artifact's release must be covered by the
 * license's support window, exactly as POST /license/download decides.
 */
export async function artifactRedirect(
  deps: Deps,
  input: { slug: string; artifactId: string; licenseKey: string | null },
): Promise<PresignedRequest> {
  const product = await productBySlug(deps, input.slug);
  assertStorage(deps);
  const found = await deps.repos.releases.findArtifact(input.artifactId);
  // Another product's artifact, a draft, or a half-uploaded one: all invisible, all the same 404.
  if (!found || found.release.productId !== product.id || found.release.status === "draft" || found.artifact.status !== "finalized") {
    throw releaseNotFound("No published artifact matches.");
  }
  if (found.release.status === "yanked") throw yanked(found.release.version);
  if (product.distribution === "licensed") {
    if (!input.licenseKey) {
      throw new AppError("UNAUTHORIZED", {
        message: "This product's downloads require a license key (query license_key or Authorization: License <key>).",
      });
    }
    const license = await findLicense(deps, input.licenseKey);
    // Unknown key, another product's key and an unusable license all answer the same 404: this URL
    // is public and embedded in cached feeds, so it must not become an oracle for probing keys or
    // their states (the same collapse as verify, spec design rule 4).
    if (!license || license.productId !== product.id || !await usable(deps, license)) throw new AppError("LICENSE_NOT_FOUND");
    if (!coveredBySupport(found.release, license.supportUntil)) throw supportExpired(license.supportUntil!);
  }
  return await presign(deps, found.artifact);
}
