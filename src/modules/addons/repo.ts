import type { FeatureValueType, QuotaPeriod } from "../plans/repo";

/** One extra feature a product sells separately and attaches to individual licenses. */
export interface Addon {
  id: string;
  productId: string;
  name: string;
  featureName: string;
  valueType: FeatureValueType;
  value: string;
  quotaLimit: number | null;
  /** Overrides the license plan's quota_period when set (quota add-ons only). */
  quotaPeriod: QuotaPeriod | null;
  createdAt: Date;
  updatedAt: Date;
}

export type AddonPatch = Partial<Pick<Addon, "name" | "featureName" | "valueType" | "value" | "quotaLimit" | "quotaPeriod">>;

/**
 * Add-on rows, no rules: the verbs (service.ts) read, decide (domain.ts) and write them with their
 * audit row in one unit of work (DataStore.transaction).
 */
export interface AddonRepo {
  /** Throws CONFLICT when the product already has an add-on of this name. */
  create(addon: Addon): Promise<Addon>;
  findById(id: string): Promise<Addon | null>;
  list(filter: { productId?: string }): Promise<Addon[]>;
  /**
   * The add-on, held until the unit of work ends (PostgreSQL: the row locked, so two edits on any
   * nodes each judge the row they replace); null when it does not exist.
   */
  lock(id: string): Promise<Addon | null>;
  /** Writes the patch and returns the row as it is now. Throws CONFLICT on a taken name. */
  update(id: string, patch: AddonPatch, at: Date): Promise<Addon>;
  /** Deletes it. Throws CONFLICT while licenses have it attached. */
  delete(id: string): Promise<void>;
  /** Add-ons attached to a license, in attach order (the order the merge rule applies them). */
  forLicense(licenseId: string): Promise<Addon[]>;
}
