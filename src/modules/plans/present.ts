import type { Plan, PlanFeature } from "./repo";

export function presentFeature(f: PlanFeature) {
  return {
    name: f.name,
    value_type: f.valueType,
    value: f.value,
    quota_limit: f.quotaLimit,
    quota_period: f.quotaPeriod,
    stripe_meter: f.stripeMeter,
    created_at: f.createdAt.toISOString(),
  };
}

/** The plan's own fields, without features (also the audit view of a plan). */
export function presentPlanFields(p: Plan) {
  return {
    id: p.id,
    product_id: p.productId,
    name: p.name,
    license_type: p.licenseType,
    trial_days: p.trialDays,
    grace_days: p.graceDays,
    max_activations: p.maxActivations,
    max_seats: p.maxSeats,
    floating: p.floating,
    floating_timeout: p.floatingTimeout,
    support_days: p.supportDays,
    support_renewal_price_id: p.supportRenewalPriceId,
    purchase_price_id: p.purchasePriceId,
    purchase_trial_days: p.purchaseTrialDays,
    portal_offline_activation: p.portalOfflineActivation,
    quota_period: p.quotaPeriod,
    created_at: p.createdAt.toISOString(),
    updated_at: p.updatedAt.toISOString(),
  };
}

export function presentPlan({ plan, features }: { plan: Plan; features: PlanFeature[] }) {
  return { ...presentPlanFields(plan), features: features.map(presentFeature) };
}

/** Audit view of a feature: its definition, without row ids or timestamps. */
export function featureAuditView(f: PlanFeature) {
  return { name: f.name, value_type: f.valueType, value: f.value, quota_limit: f.quotaLimit, quota_period: f.quotaPeriod, stripe_meter: f.stripeMeter };
}
