import { eq, sql } from "drizzle-orm";
import { lazyStatement, type DbHandle } from "../../db/client";
import { addons, licenseAddons, planFeatures } from "../../db/schema";
import { createLicenseAccessReaders } from "../license-api/repo.sqlite";
import type { EntitlementRepo, FeatureGrant } from "./repo";

/** Prepared readers of plan and add-on grants, shared by the entitlement repo and verify's lookup. */
export function createGrantReaders(handle: DbHandle) {
  const { db } = handle;
  // Verify reads features on every call. Measured here (bun:sqlite, prepared): a single-table
  // indexed read costs ~2 µs, while any multi-table statement (UNION or JOIN) or an ORDER BY adds
  // ~5 µs per execution even when it returns no rows. So: single-table statements only, add-ons
  // fetched by id (most licenses have none: one ~2 µs read), ordering done in JS.
  const grantColumns = {
    name: planFeatures.name,
    valueType: planFeatures.valueType,
    value: planFeatures.value,
    quotaLimit: planFeatures.quotaLimit,
    quotaPeriod: planFeatures.quotaPeriod,
  };
  const planGrants = lazyStatement(() =>
    db.select(grantColumns).from(planFeatures).where(eq(planFeatures.planId, sql.placeholder("planId"))).prepare(),
  );
  // The same read with the Stripe meter, for usage reports (verify does not need it).
  const meteredPlanGrants = lazyStatement(() =>
    db
      .select({ ...grantColumns, stripeMeter: planFeatures.stripeMeter })
      .from(planFeatures)
      .where(eq(planFeatures.planId, sql.placeholder("planId")))
      .prepare(),
  );
  const attached = lazyStatement(() =>
    db
      .select({ addonId: licenseAddons.addonId, attachedAt: licenseAddons.createdAt })
      .from(licenseAddons)
      .where(eq(licenseAddons.licenseId, sql.placeholder("licenseId")))
      .prepare(),
  );
  const addonById = lazyStatement(() =>
    db
      .select({
        name: addons.featureName,
        valueType: addons.valueType,
        value: addons.value,
        quotaLimit: addons.quotaLimit,
        quotaPeriod: addons.quotaPeriod,
      })
      .from(addons)
      .where(eq(addons.id, sql.placeholder("id")))
      .prepare(),
  );

  return {
    planGrants(planId: string): FeatureGrant[] {
      return planGrants().all({ planId }).map((r) => ({ source: "plan" as const, ...r }));
    },
    /** planGrants with `stripeMeter` on the features that name one. */
    meteredPlanGrants(planId: string): FeatureGrant[] {
      return meteredPlanGrants()
        .all({ planId })
        .map(({ stripeMeter, ...r }) => (stripeMeter === null ? { source: "plan" as const, ...r } : { source: "plan" as const, ...r, stripeMeter }));
    },
    /** The license's add-on grants in attach order (then add-on id). */
    addonGrants(licenseId: string): FeatureGrant[] {
      const out: FeatureGrant[] = [];
      const links = attached().all({ licenseId });
      // The merge rule (domain.ts) applies add-ons in attach order: later ones override earlier ones.
      if (links.length > 1) {
        links.sort((a, b) => a.attachedAt.getTime() - b.attachedAt.getTime() || (a.addonId < b.addonId ? -1 : a.addonId > b.addonId ? 1 : 0));
      }
      for (const link of links) {
        const addon = addonById().get({ id: link.addonId });
        if (addon) out.push({ source: "addon", ...addon });
      }
      return out;
    },
  };
}

export function createEntitlementRepo(handle: DbHandle): EntitlementRepo {
  const readers = createGrantReaders(handle);
  const access = createLicenseAccessReaders(handle);
  return {
    grants: async (planId, licenseId) => [...readers.meteredPlanGrants(planId), ...readers.addonGrants(licenseId)],
    async findWithGrants(keyHash) {
      const found = access.findByKeyHash(keyHash);
      if (!found) return null;
      return { access: found, grants: [...readers.meteredPlanGrants(found.plan.id), ...readers.addonGrants(found.license.id)] };
    },
  };
}
