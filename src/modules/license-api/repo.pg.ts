import { eq, sql, type SQL } from "drizzle-orm";
import type { PgHandle, PgExecutor } from "../../db/pg";
import { licenses, plans } from "../../db/schema-pg";
import type { LicenseAccess, LicenseAccessRepo, PublicLicense, PublicPlan } from "./repo";
import type { FeatureGrant } from "../entitlements/repo";
import type { LicenseStatus } from "../licenses/repo";
import type { QuotaPeriod } from "../plans/repo";

export const licenseColumns = {
  id: licenses.id,
  productId: licenses.productId,
  planId: licenses.planId,
  status: licenses.status,
  validUntil: licenses.validUntil,
  supportUntil: licenses.supportUntil,
  externalCustomerId: licenses.externalCustomerId,
  externalWorkspaceId: licenses.externalWorkspaceId,
} satisfies Record<keyof PublicLicense, unknown>;

export const planColumns = {
  id: plans.id,
  name: plans.name,
  graceDays: plans.graceDays,
  maxActivations: plans.maxActivations,
  floating: plans.floating,
  floatingTimeout: plans.floatingTimeout,
  quotaPeriod: plans.quotaPeriod,
} satisfies Record<keyof PublicPlan, unknown>;

/**
 * License + plan in one round trip (a join: on PostgreSQL each statement is a network round trip,
 * which costs more than the join). `forUpdate` locks the license row: the activation, usage and
 * floating repositories re-read the license with it inside their write transactions, so a revoke
 * racing an activation waits for it or wins (and the activation sees the new status).
 */
export async function readLicenseAccess(
  tx: PgExecutor,
  by: { keyHash: string } | { id: string },
  opts: { forUpdate?: boolean } = {},
): Promise<LicenseAccess | null> {
  const where = "keyHash" in by ? eq(licenses.keyHash, by.keyHash) : eq(licenses.id, by.id);
  const q = tx.select({ license: licenseColumns, plan: planColumns }).from(licenses).innerJoin(plans, eq(plans.id, licenses.planId)).where(where);
  const [row] = opts.forUpdate ? await q.for("update", { of: licenses }) : await q;
  return row ? { license: row.license, plan: row.plan } : null;
}

export function createLicenseAccessRepoPg(handle: PgHandle): LicenseAccessRepo {
  const { db } = handle;
  // Hot path (activate, usage, entitlements): the SQL is built once, on first use, and postgres.js
  // prepares it on the server (drizzle's unprepared queries are parsed and planned on every call).
  const prepared = (name: string, where: SQL) =>
    db.select({ license: licenseColumns, plan: planColumns }).from(licenses).innerJoin(plans, eq(plans.id, licenses.planId)).where(where).prepare(name);
  let byHash: ReturnType<typeof prepared> | undefined;
  let byId: ReturnType<typeof prepared> | undefined;
  const one = (rows: { license: PublicLicense; plan: PublicPlan }[]): LicenseAccess | null => {
    const row = rows[0];
    return row ? { license: row.license, plan: row.plan } : null;
  };
  return {
    async findByKeyHash(keyHash) {
      byHash ??= prepared("license_access_by_key_hash", eq(licenses.keyHash, sql.placeholder("key")));
      return one(await byHash.execute({ key: keyHash }));
    },
    async findById(id) {
      byId ??= prepared("license_access_by_id", eq(licenses.id, sql.placeholder("key")));
      return one(await byId.execute({ key: id }));
    },
    async findWithGrants(keyHash) {
      // One statement: license, plan, plan features (name order) and add-on grants (attach order,
      // then add-on id), the order EntitlementRepo.grants reads them in.
      const [r] = await handle.sql<AccessWithGrantsRow[]>`
        SELECT l.id, l.product_id, l.plan_id, l.status,
               (extract(epoch FROM l.valid_until) * 1000)::float8 AS valid_until,
               (extract(epoch FROM l.support_until) * 1000)::float8 AS support_until,
               l.external_customer_id, l.external_workspace_id,
               p.name, p.grace_days, p.max_activations, p.floating, p.floating_timeout, p.quota_period,
               (SELECT coalesce(json_agg(json_build_array(f.name, f.value_type, f.value, f.quota_limit, f.quota_period)
                                         ORDER BY f.name COLLATE "C"), '[]'::json)
                  FROM plan_features f WHERE f.plan_id = l.plan_id) AS plan_grants,
               (SELECT json_agg(json_build_array(ad.feature_name, ad.value_type, ad.value, ad.quota_limit, ad.quota_period)
                                ORDER BY la.created_at, la.addon_id COLLATE "C")
                  FROM license_addons la JOIN addons ad ON ad.id = la.addon_id WHERE la.license_id = l.id) AS addon_grants
          FROM licenses l JOIN plans p ON p.id = l.plan_id
         WHERE l.key_hash = ${keyHash}`;
      if (!r) return null;
      const grants = (source: FeatureGrant["source"], rows: GrantTuple[]): FeatureGrant[] =>
        rows.map(([name, valueType, value, quotaLimit, quotaPeriod]) => ({ source, name, valueType, value, quotaLimit, quotaPeriod }));
      return {
        access: {
          license: {
            id: r.id,
            productId: r.product_id,
            planId: r.plan_id,
            status: r.status,
            validUntil: r.valid_until === null ? null : new Date(r.valid_until),
            supportUntil: r.support_until === null ? null : new Date(r.support_until),
            externalCustomerId: r.external_customer_id,
            externalWorkspaceId: r.external_workspace_id,
          },
          plan: {
            id: r.plan_id,
            name: r.name,
            graceDays: r.grace_days,
            maxActivations: r.max_activations,
            floating: r.floating,
            floatingTimeout: r.floating_timeout,
            quotaPeriod: r.quota_period,
          },
        },
        grants: [...grants("plan", r.plan_grants), ...grants("addon", r.addon_grants ?? [])],
      };
    },
  };
}

type GrantTuple = [string, FeatureGrant["valueType"], string, number | null, QuotaPeriod | null];

interface AccessWithGrantsRow {
  id: string;
  product_id: string;
  plan_id: string;
  status: LicenseStatus;
  /** Epoch milliseconds (the raw client returns timestamps as text). */
  valid_until: number | null;
  support_until: number | null;
  external_customer_id: string | null;
  external_workspace_id: string | null;
  name: string;
  grace_days: number;
  max_activations: number | null;
  floating: boolean;
  floating_timeout: number;
  quota_period: QuotaPeriod;
  plan_grants: GrantTuple[];
  addon_grants: GrantTuple[] | null;
}
