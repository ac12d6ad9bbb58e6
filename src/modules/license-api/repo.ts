import type { License } from "../licenses/repo";
import type { Plan } from "../plans/repo";

/**
 * The license columns the public license API uses. Public calls never need the key's ciphertext,
 * hint, owner email or bookkeeping timestamps, so the hot-path reads do not fetch them.
 */
export type PublicLicense = Pick<
  License,
  "id" | "productId" | "planId" | "status" | "validUntil" | "supportUntil" | "externalCustomerId" | "externalWorkspaceId"
>;

/** The plan columns the public license API uses. */
export type PublicPlan = Pick<Plan, "id" | "name" | "graceDays" | "maxActivations" | "floating" | "floatingTimeout" | "quotaPeriod">;

/** A license with its plan: what every public license call needs. */
export interface LicenseAccess {
  license: PublicLicense;
  plan: PublicPlan;
}

export interface LicenseAccessRepo {
  /** Hot path: two prepared indexed single-table reads (license by unique key_hash, plan by id). */
  findByKeyHash(keyHash: string): Promise<LicenseAccess | null>;
  findById(licenseId: string): Promise<LicenseAccess | null>;
}
