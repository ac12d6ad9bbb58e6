import { asc, eq, sql } from "drizzle-orm";
import type { DbHandle } from "../../db/client";
import { addons, licenseAddons, planFeatures } from "../../db/schema";
import type { EntitlementRepo, FeatureGrant } from "./repo";

export function createEntitlementRepo(handle: DbHandle): EntitlementRepo {
  const { db } = handle;
  // Plan features, then the license's add-on features in attach order: one prepared statement,
  // because verify reads it on every call (ordering matters for the merge rule in domain.ts).
  const planPart = db
    .select({
      source: sql<FeatureGrant["source"]>`'plan'`.as("source"),
      name: planFeatures.name,
      valueType: planFeatures.valueType,
      value: planFeatures.value,
      quotaLimit: planFeatures.quotaLimit,
      quotaPeriod: planFeatures.quotaPeriod,
      ord: sql<number>`0`.as("ord"),
      attachedAt: sql<number>`0`.as("attached_at"),
      addonId: sql<string>`''`.as("addon_id"),
    })
    .from(planFeatures)
    .where(eq(planFeatures.planId, sql.placeholder("planId")));
  const addonPart = db
    .select({
      source: sql<FeatureGrant["source"]>`'addon'`.as("source"),
      name: addons.featureName,
      valueType: addons.valueType,
      value: addons.value,
      quotaLimit: addons.quotaLimit,
      quotaPeriod: addons.quotaPeriod,
      ord: sql<number>`1`.as("ord"),
      attachedAt: sql<number>`${licenseAddons.createdAt}`.as("attached_at"),
      addonId: sql<string>`${addons.id}`.as("addon_id"),
    })
    .from(licenseAddons)
    .innerJoin(addons, eq(addons.id, licenseAddons.addonId))
    .where(eq(licenseAddons.licenseId, sql.placeholder("licenseId")));
  const grants = planPart
    .unionAll(addonPart)
    .orderBy(asc(sql`ord`), asc(sql`attached_at`), asc(sql`addon_id`), asc(sql`name`))
    .prepare();

  return {
    grants(planId, licenseId) {
      return grants.all({ planId, licenseId }).map((r) => ({
        source: r.source,
        name: r.name,
        valueType: r.valueType,
        value: r.value,
        quotaLimit: r.quotaLimit,
        quotaPeriod: r.quotaPeriod,
      }));
    },
  };
}
