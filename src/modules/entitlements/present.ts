import type { EntitlementsResult, FeatureView } from "./service";

export const presentFeature = (v: FeatureView) => ({
  enabled: v.enabled,
  value_type: v.valueType,
  value: v.value,
  used: v.used,
  limit: v.limit,
  remaining: v.remaining,
  period: v.period,
  resets_at: v.resetsAt.toISOString(),
});

export function presentEntitlements({ access: { license, plan }, features }: EntitlementsResult) {
  return {
    // A 200 is only ever given for a usable license (see getEntitlements), hence always true.
    licensed: true,
    status: license.status,
    plan_id: plan.id,
    plan_name: plan.name,
    features: Object.fromEntries(features.map((f) => [f.name, presentFeature(f)])),
  };
}
