import type { FeatureValueType, QuotaPeriod } from "../plans/repo";
import type { LicenseAccess } from "../license-api/repo";

/** One feature as granted by the license's plan or by one of its add-ons, before merging. */
export interface FeatureGrant {
  source: "plan" | "addon";
  name: string;
  valueType: FeatureValueType;
  value: string;
  quotaLimit: number | null;
  quotaPeriod: QuotaPeriod | null;
  /**
   * The Stripe meter (event name) a plan quota feature reports usage to (docs/payments.md "Metered
   * billing"). Read by EntitlementRepo only, and present only when set: verify's readers leave it out.
   */
  stripeMeter?: string;
}

export interface EntitlementRepo {
  /**
   * Plan features (any order), then the license's add-on features ordered by attach time, then
   * add-on id. Verify reads this on every call.
   */
  grants(planId: string, licenseId: string): Promise<FeatureGrant[]>;
  /**
   * The license behind a key hash with its plan (as LicenseAccessRepo.findByKeyHash) and its grants
   * (as grants()), in one round trip on PostgreSQL: usage reports need both. Null when unknown.
   */
  findWithGrants(keyHash: string): Promise<{ access: LicenseAccess; grants: FeatureGrant[] } | null>;
}
