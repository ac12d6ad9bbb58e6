import { eq, sql, type SQL } from "drizzle-orm";
import type { PgHandle, PgExecutor } from "../../db/pg";
import { licenses, plans } from "../../db/schema-pg";
import type { LicenseAccess, LicenseAccessRepo, PublicLicense, PublicPlan } from "./repo";
import { rawLicense, type RawLicenseRow } from "./raw-rows";
import type { QuotaPeriod } from "../plans/repo";

/** A plan's columns in those statements (its id is the license's plan_id). */
export interface RawPlanRow {
  name: string;
  grace_days: number;
  max_activations: number | null;
  floating: boolean;
  floating_timeout: number;
  quota_period: QuotaPeriod;
}

export const rawPlan = (planId: string, r: RawPlanRow): PublicPlan => ({
  id: planId,
  name: r.name,
  graceDays: r.grace_days,
  maxActivations: r.max_activations,
  floating: r.floating,
  floatingTimeout: r.floating_timeout,
  quotaPeriod: r.quota_period,
});

export const rawAccess = (r: RawLicenseRow & RawPlanRow): LicenseAccess => ({ license: rawLicense(r), plan: rawPlan(r.plan_id, r) });

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
  };
}
