import { eq, sql } from "drizzle-orm";
import type { DbHandle } from "../../db/client";
import { licenses, plans } from "../../db/schema";
import type { LicenseAccess, LicenseAccessRepo } from "./repo";

/**
 * Prepared license+plan reads. Also used by the activation and floating repositories to re-read the
 * license inside their write transactions (a revoke racing an activation must win).
 */
export function createLicenseAccessRepo(handle: DbHandle): LicenseAccessRepo {
  const { db } = handle;
  const base = () => db.select({ license: licenses, plan: plans }).from(licenses).innerJoin(plans, eq(plans.id, licenses.planId));
  const byKeyHash = base().where(eq(licenses.keyHash, sql.placeholder("hash"))).prepare();
  const byId = base().where(eq(licenses.id, sql.placeholder("id"))).prepare();
  return {
    findByKeyHash: (hash) => (byKeyHash.get({ hash }) as LicenseAccess | undefined) ?? null,
    findById: (id) => (byId.get({ id }) as LicenseAccess | undefined) ?? null,
  };
}
