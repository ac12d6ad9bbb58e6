import type { Effects } from "../outbox/effects";
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

export interface AddonRepo {
  /** Throws CONFLICT when the product already has an add-on of this name. */
  create(addon: Addon, effects: Effects): Promise<Addon>;
  findById(id: string): Promise<Addon | null>;
  list(filter: { productId?: string }): Promise<Addon[]>;
  /**
   * Atomic read-decide-write: `decide` sees the current row inside the write transaction and returns
   * the full patch (or throws to refuse). Returns null when the add-on does not exist.
   */
  update(id: string, decide: (current: Addon) => AddonPatch, at: Date, effects: (before: Addon, after: Addon) => Effects): Promise<Addon | null>;
  /** Throws CONFLICT while licenses have it attached. Returns false when it does not exist. */
  delete(id: string, effects: (before: Addon) => Effects): Promise<boolean>;
  /** Add-ons attached to a license, in attach order (the order the merge rule applies them). */
  forLicense(licenseId: string): Promise<Addon[]>;
}
