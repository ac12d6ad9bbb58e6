import { eq, sql } from "drizzle-orm";
import { lazyStatement, lift, type DbHandle } from "../../db/client";
import { licenses, plans } from "../../db/schema";
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
 * Prepared license and plan reads for the public API. Also used by the activation and floating
 * repositories to re-read the license inside their write transactions (a revoke racing an
 * activation must win).
 *
 * Shaped for the verify hot path, as measured here with bun:sqlite: single-table statements only
 * (an indexed single-table read costs ~2-3 µs; the licenses⋈plans join cost ~15-20 µs per call),
 * and only the columns the public API uses.
 */
export function createLicenseAccessReaders(handle: DbHandle) {
  const { db } = handle;
  const licenseByKeyHash = lazyStatement(() =>
    db.select(licenseColumns).from(licenses).where(eq(licenses.keyHash, sql.placeholder("hash"))).prepare(),
  );
  const licenseById = lazyStatement(() => db.select(licenseColumns).from(licenses).where(eq(licenses.id, sql.placeholder("id"))).prepare());
  const planById = lazyStatement(() => db.select(planColumns).from(plans).where(eq(plans.id, sql.placeholder("id"))).prepare());
  const withPlan = (license: PublicLicense | undefined): LicenseAccess | null => {
    if (!license) return null;
    const plan = planById().get({ id: license.planId });
    return plan ? { license, plan } : null;
  };
  return {
    findByKeyHash: (hash: string) => withPlan(licenseByKeyHash().get({ hash })),
    findById: (id: string) => withPlan(licenseById().get({ id })),
  };
}

export function createLicenseAccessRepo(handle: DbHandle): LicenseAccessRepo {
  const readers = createLicenseAccessReaders(handle);
  return { findByKeyHash: lift(readers.findByKeyHash), findById: lift(readers.findById) };
}
