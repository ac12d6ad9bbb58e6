import type { Addon } from "./repo";

export function presentAddon(a: Addon) {
  return {
    id: a.id,
    product_id: a.productId,
    name: a.name,
    feature_name: a.featureName,
    value_type: a.valueType,
    value: a.value,
    quota_limit: a.quotaLimit,
    quota_period: a.quotaPeriod,
    created_at: a.createdAt.toISOString(),
    updated_at: a.updatedAt.toISOString(),
  };
}

/** Audit view: the definition without timestamps. */
export function addonAuditView(a: Addon) {
  const { created_at: _c, updated_at: _u, ...rest } = presentAddon(a);
  return rest;
}
