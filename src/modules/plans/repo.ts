
export type LicenseType = "perpetual" | "subscription" | "trial";
export type QuotaPeriod = "hourly" | "daily" | "monthly" | "yearly";
export type FeatureValueType = "bool" | "int" | "string" | "quota" | "flag";

export interface Plan {
  id: string;
  productId: string;
  name: string;
  licenseType: LicenseType;
  trialDays: number;
  graceDays: number;
  /** null = unlimited */
  maxActivations: number | null;
  /** null = unlimited */
  maxSeats: number | null;
  floating: boolean;
  /** minutes */
  floatingTimeout: number;
  supportDays: number;
  supportRenewalPriceId: string | null;
  /** Stripe price sold by POST /license/checkout; null: not for sale (docs/payments.md). */
  purchasePriceId: string | null;
  /** Free trial days of a subscription bought through checkout; 0: none. */
  purchaseTrialDays: number;
  /** License owners may activate one air-gapped machine themselves in the portal (non-floating plans only). */
  portalOfflineActivation: boolean;
  quotaPeriod: QuotaPeriod;
  createdAt: Date;
  updatedAt: Date;
}

export interface PlanFeature {
  id: string;
  planId: string;
  name: string;
  valueType: FeatureValueType;
  value: string;
  quotaLimit: number | null;
  /** Overrides the plan's quota_period for this feature when set. */
  quotaPeriod: QuotaPeriod | null;
  /** Stripe meter event name (quota features): accepted usage is reported to Stripe Billing (docs/payments.md). */
  stripeMeter: string | null;
  createdAt: Date;
}

export type PlanPatch = Partial<Omit<Plan, "id" | "productId" | "createdAt" | "updatedAt">>;

/**
 * Plan and feature rows, no rules: the verbs (service.ts) write them with their audit rows in one
 * unit of work (DataStore.transaction). Every write bumps the catalog generation in the same
 * transaction (verify's plan cache on every node drops what it holds: catalog-cache.ts): a write's
 * statements (the rows, then the bump) are the caller's unit's; outside a unit each commits alone.
 */
export interface PlanRepo {
  /** Throws CONFLICT on a duplicate feature name or an unknown product. */
  create(plan: Plan, features: PlanFeature[]): Promise<Plan>;
  findById(id: string): Promise<Plan | null>;
  list(filter: { productId?: string }): Promise<Plan[]>;
  /**
   * The plan, held until the unit of work ends (PostgreSQL: FOR NO KEY UPDATE, which leaves
   * foreign-key checks — a license issued on the plan — unblocked): edits of one plan and of its
   * features run one after another, each seeing the rows as the previous one left them. null when
   * it does not exist.
   */
  lock(id: string): Promise<Plan | null>;
  /** Writes the patch and returns the plan as it is now. */
  update(id: string, patch: PlanPatch, at: Date): Promise<Plan>;
  /** Deletes it (features cascade) and returns it as it was; null when it does not exist. Throws CONFLICT while licenses use it. */
  delete(id: string): Promise<Plan | null>;
  features(planId: string): Promise<PlanFeature[]>;
  feature(planId: string, name: string): Promise<PlanFeature | null>;
  /** Inserts or replaces the feature with this name; returns it as stored. */
  upsertFeature(feature: PlanFeature): Promise<PlanFeature>;
  /** Deletes the feature and returns it as it was; null when the plan has no feature of that name. */
  deleteFeature(planId: string, name: string): Promise<PlanFeature | null>;
}
