import type { Effects } from "../outbox/effects";

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

export interface PlanRepo {
  /** Throws CONFLICT on a duplicate feature name. */
  create(plan: Plan, features: PlanFeature[], effects: Effects): Promise<Plan>;
  findById(id: string): Promise<Plan | null>;
  list(filter: { productId?: string }): Promise<Plan[]>;
  /** Returns null when the plan does not exist; `audit` sees the rows before and after, inside the transaction. */
  update(id: string, patch: PlanPatch, at: Date, effects: (before: Plan, after: Plan) => Effects): Promise<Plan | null>;
  /** Throws CONFLICT while licenses reference the plan. Returns false when it does not exist. */
  delete(id: string, effects: (before: Plan) => Effects): Promise<boolean>;
  features(planId: string): Promise<PlanFeature[]>;
  /** Insert or replace the feature with this name; `audit` sees the replaced feature (null when new). */
  upsertFeature(feature: PlanFeature, effects: (before: PlanFeature | null, after: PlanFeature) => Effects): Promise<PlanFeature>;
  /** Returns false when the plan has no feature of that name. */
  deleteFeature(planId: string, name: string, effects: (before: PlanFeature) => Effects): Promise<boolean>;
}
