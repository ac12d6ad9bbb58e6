import type { PgHandle } from "../../db/pg";
import type { QuotaPeriod } from "../plans/repo";
import type { EntitlementRepo, FeatureGrant } from "./repo";

interface GrantRow {
  source: FeatureGrant["source"];
  name: string;
  value_type: FeatureGrant["valueType"];
  value: string;
  quota_limit: number | null;
  quota_period: QuotaPeriod | null;
}

export function createEntitlementRepoPg(handle: PgHandle): EntitlementRepo {
  const { sql } = handle;
  return {
    async grants(planId, licenseId) {
      // One round trip: plan features (name order, as SQLite reads them off its (plan_id, name)
      // index), then add-on features in attach order, then add-on id (the merge rule in domain.ts
      // applies add-ons in that order: later ones override earlier ones).
      const rows = await sql<GrantRow[]>`
        SELECT 'plan' AS source, f.name, f.value_type, f.value, f.quota_limit, f.quota_period,
               0 AS k, NULL::timestamptz AS attached_at, f.name COLLATE "C" AS tie
          FROM plan_features f WHERE f.plan_id = ${planId}
        UNION ALL
        SELECT 'addon', a.feature_name, a.value_type, a.value, a.quota_limit, a.quota_period,
               1, la.created_at, la.addon_id COLLATE "C"
          FROM license_addons la JOIN addons a ON a.id = la.addon_id WHERE la.license_id = ${licenseId}
        ORDER BY k, attached_at, tie`;
      return rows.map((r) => ({
        source: r.source,
        name: r.name,
        valueType: r.value_type,
        value: r.value,
        quotaLimit: r.quota_limit,
        quotaPeriod: r.quota_period,
      }));
    },
  };
}
