import type { FeatureValueType, QuotaPeriod } from "../plans/repo";

/** One feature as granted by the license's plan or by one of its add-ons, before merging. */
export interface FeatureGrant {
  source: "plan" | "addon";
  name: string;
  valueType: FeatureValueType;
  value: string;
  quotaLimit: number | null;
  quotaPeriod: QuotaPeriod | null;
}

export interface EntitlementRepo {
  /**
   * Plan features then add-on features of one license (add-ons ordered by attach time, then id), in
   * one prepared query: verify reads this on every call.
   */
  grants(planId: string, licenseId: string): FeatureGrant[];
}
