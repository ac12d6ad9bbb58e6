import { eq } from "drizzle-orm";
import type { PgHandle, PgExecutor } from "../../db/pg";
import { licenses, plans } from "../../db/schema-pg";
import type { LicenseAccess, LicenseAccessRepo, PublicLicense, PublicPlan } from "./repo";

const licenseColumns = {
  id: licenses.id,
  productId: licenses.productId,
  planId: licenses.planId,
  status: licenses.status,
  validUntil: licenses.validUntil,
  supportUntil: licenses.supportUntil,
  externalCustomerId: licenses.externalCustomerId,
  externalWorkspaceId: licenses.externalWorkspaceId,
} satisfies Record<keyof PublicLicense, unknown>;

const planColumns = {
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
  return {
    findByKeyHash: (keyHash) => readLicenseAccess(db, { keyHash }),
    findById: (id) => readLicenseAccess(db, { id }),
  };
}
