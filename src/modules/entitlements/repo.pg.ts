import type { PgHandle } from "../../db/pg";
import type { QuotaPeriod } from "../plans/repo";
import type { EntitlementRepo, FeatureGrant } from "./repo";
import { rawAccess, type RawPlanRow } from "../license-api/repo.pg";
import type { RawLicenseRow } from "../license-api/raw-rows";

/**
 * A feature grant as `json_build_array(name, value_type, value, quota_limit, quota_period)` (hand-written
 * statements), with `stripe_meter` as a sixth element where the statement reads it (usage reports).
 */
export type RawGrant = [string, FeatureGrant["valueType"], string, number | null, QuotaPeriod | null, (string | null)?];

export const rawGrants = (source: FeatureGrant["source"], rows: RawGrant[]): FeatureGrant[] =>
  rows.map(([name, valueType, value, quotaLimit, quotaPeriod, stripeMeter]) =>
    stripeMeter ? { source, name, valueType, value, quotaLimit, quotaPeriod, stripeMeter } : { source, name, valueType, value, quotaLimit, quotaPeriod },
  );

interface GrantRow {
  source: FeatureGrant["source"];
  name: string;
  value_type: FeatureGrant["valueType"];
  value: string;
  quota_limit: number | null;
  quota_period: QuotaPeriod | null;
  stripe_meter: string | null;
}

export function createEntitlementRepoPg(handle: PgHandle): EntitlementRepo {
  const { sql } = handle;
  return {
    async grants(planId, licenseId) {
      // One round trip: plan features (name order, as SQLite reads them off its (plan_id, name)
      // index), then add-on features in attach order, then add-on id (the merge rule in domain.ts
      // applies add-ons in that order: later ones override earlier ones).
      const rows = await sql<GrantRow[]>`
        SELECT 'plan' AS source, f.name, f.value_type, f.value, f.quota_limit, f.quota_period, f.stripe_meter,
               0 AS k, NULL::timestamptz AS attached_at, f.name COLLATE "C" AS tie
          FROM plan_features f WHERE f.plan_id = ${planId}
        UNION ALL
        SELECT 'addon', a.feature_name, a.value_type, a.value, a.quota_limit, a.quota_period, NULL,
               1, la.created_at, la.addon_id COLLATE "C"
          FROM license_addons la JOIN addons a ON a.id = la.addon_id WHERE la.license_id = ${licenseId}
        ORDER BY k, attached_at, tie`;
      return rows.map((r) => {
        const g: FeatureGrant = { source: r.source, name: r.name, valueType: r.value_type, value: r.value, quotaLimit: r.quota_limit, quotaPeriod: r.quota_period };
        return r.stripe_meter === null ? g : { ...g, stripeMeter: r.stripe_meter };
      });
    },
    async findWithGrants(keyHash) {
      // One statement: license, plan, plan features (name order) and add-on grants (attach order,
      // then add-on id), the order EntitlementRepo.grants reads them in.
      const [r] = await sql<AccessWithGrantsRow[]>`
        SELECT l.id, l.product_id, l.plan_id, l.status,
               (extract(epoch FROM l.valid_until) * 1000)::float8 AS valid_until,
               (extract(epoch FROM l.support_until) * 1000)::float8 AS support_until,
               l.external_customer_id, l.external_workspace_id,
               p.name, p.grace_days, p.max_activations, p.floating, p.floating_timeout, p.quota_period,
               (SELECT coalesce(json_agg(json_build_array(f.name, f.value_type, f.value, f.quota_limit, f.quota_period, f.stripe_meter)
                                         ORDER BY f.name COLLATE "C"), '[]'::json)
                  FROM plan_features f WHERE f.plan_id = l.plan_id) AS plan_grants,
               (SELECT json_agg(json_build_array(ad.feature_name, ad.value_type, ad.value, ad.quota_limit, ad.quota_period)
                                ORDER BY la.created_at, la.addon_id COLLATE "C")
                  FROM license_addons la JOIN addons ad ON ad.id = la.addon_id WHERE la.license_id = l.id) AS addon_grants
          FROM licenses l JOIN plans p ON p.id = l.plan_id
         WHERE l.key_hash = ${keyHash}`;
      if (!r) return null;
      return {
        access: rawAccess(r),
        grants: [...rawGrants("plan", r.plan_grants), ...rawGrants("addon", r.addon_grants ?? [])],
      };
    },
  };
}

interface AccessWithGrantsRow extends RawLicenseRow, RawPlanRow {
  plan_grants: RawGrant[];
  addon_grants: RawGrant[] | null;
}
