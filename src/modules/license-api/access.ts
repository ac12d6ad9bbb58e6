// How public license calls find their license. The license key in the body is the only credential
// (spec: design rule 1), so everything here is about not turning these routes into an oracle.
import type { Deps } from "../../deps";
import { AppError, validationError } from "../../shared/errors";
import { MAX_STORED_IDENTIFIER_BYTES } from "../../shared/identifier-limit";
import { isWellFormedLicenseKey, normalizeLicenseKey } from "../../crypto/license-key";
import { licenseKeyHash } from "../licenses/service";
import { isUsable } from "../licenses/domain";
import type { LicenseAccess } from "./repo";

/**
 * The one failure answer of the public license API (spec: design rule 4, Errors). Always built here,
 * always with the default message and null details, so the bodies of all collapsed failures are
 * byte-identical: a caller probing keys cannot tell a missing key from a revoked one, a key of
 * another product, or a known key with a wrong identifier.
 */
export function licenseNotFound(): AppError {
  return new AppError("LICENSE_NOT_FOUND");
}

export interface PublicLicenseInput {
  licenseKey: string;
  /** Optional: a client that names its product gets 404 for another product's key. */
  productId?: string;
}

/** 400 for an identifier a new row cannot hold (MAX_STORED_IDENTIFIER_BYTES), before anything is read. */
export function assertStorableIdentifier(identifier: string): void {
  // A UTF-16 code unit is at most 3 bytes of UTF-8 (a surrogate pair, two units, is 4): short
  // identifiers need no count.
  if (identifier.length * 3 > MAX_STORED_IDENTIFIER_BYTES && Buffer.byteLength(identifier, "utf8") > MAX_STORED_IDENTIFIER_BYTES) {
    throw validationError({ identifier: `a new identifier is at most ${MAX_STORED_IDENTIFIER_BYTES} bytes of UTF-8` });
  }
}

/** Lookup hash of a well-formed key; null for anything that cannot be a key (never hits the DB). */
export function keyHashOf(deps: Pick<Deps, "secrets">, rawKey: string): string | null {
  const key = normalizeLicenseKey(rawKey);
  return isWellFormedLicenseKey(key) ? licenseKeyHash(deps, key) : null;
}

export function belongsToProduct(access: LicenseAccess, productId: string | undefined): boolean {
  return productId === undefined || access.license.productId === productId;
}

/** The license behind a key, or null when malformed, unknown or another product's key (activate's view). */
export async function findLicense(deps: Deps, input: PublicLicenseInput): Promise<LicenseAccess | null> {
  const hash = keyHashOf(deps, input.licenseKey);
  if (hash === null) return null;
  const access = await deps.repos.licenseAccess.findByKeyHash(hash);
  return access && belongsToProduct(access, input.productId) ? access : null;
}

export function isUsableAccess(access: LicenseAccess, now: Date): boolean {
  return isUsable(access.license, access.plan.graceDays, now);
}

/**
 * A usable license or the collapsed 404. Entitlements, usage and floating use this: if they answered
 * "suspended" or "expired" where verify answers 404, they would be the oracle verify refuses to be.
 */
export async function requireUsableLicense(deps: Deps, input: PublicLicenseInput, now: Date): Promise<LicenseAccess> {
  const access = await findLicense(deps, input);
  if (!access || !isUsableAccess(access, now)) throw licenseNotFound();
  return access;
}
