import type { AuditEntry } from "../audit/repo";

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
  createdAt: Date;
}

export type PlanPatch = Partial<Omit<Plan, "id" | "productId" | "createdAt" | "updatedAt">>;

export interface PlanRepo {
  create(plan: Plan, features: PlanFeature[], audit: AuditEntry): Plan;
  findById(id: string): Plan | null;
  list(filter: { productId?: string }): Plan[];
  update(id: string, patch: PlanPatch, at: Date, audit: AuditEntry): Plan | null;
  /** Throws CONFLICT while licenses reference the plan. */
  delete(id: string, audit: AuditEntry): boolean;
  features(planId: string): PlanFeature[];
  /** Insert or replace the feature with this name. */
  upsertFeature(feature: PlanFeature, audit: AuditEntry): PlanFeature;
  deleteFeature(planId: string, name: string, audit: AuditEntry): boolean;
}
