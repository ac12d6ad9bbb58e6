// PlanRepo on both engines, written once against the query seam (db/dialect/query.ts): plan and
// feature rows and the plan's lock; the verbs (service.ts) write them with their audit rows in one
// unit of work.
import { and, asc, eq, sql } from "drizzle-orm";
import type { QueryDialect } from "../../db/dialect/query";
import { rethrowConstraint } from "../../db/errors";
import { CATALOG_GENERATION } from "./catalog";
import type { PlanRepo } from "./repo";

export function createPlanRepo(d: QueryDialect): PlanRepo {
  const { db } = d;
  const { generations, planFeatures, plans } = d.tables;
  /**
   * Every write to plans or features below bumps the catalog generation after it, in the caller's
   * unit of work, so both commit together: verify's plan cache (activations/catalog-cache.ts) on
   * every node reads it and drops what it holds.
   */
  const bumpCatalog = () =>
    db
      .insert(generations)
      .values({ name: CATALOG_GENERATION, value: 1 })
      .onConflictDoUpdate({ target: generations.name, set: { value: sql`${generations.value} + 1` } });
  const byId = (id: string) => db.select().from(plans).where(eq(plans.id, id));
  const featureNamed = (planId: string, name: string) => and(eq(planFeatures.planId, planId), eq(planFeatures.name, name));
  return {
    async create(plan, features) {
      d.requireUnit("plans.create");
      try {
        await db.insert(plans).values(plan);
        if (features.length > 0) await db.insert(planFeatures).values(features);
        await bumpCatalog();
        return plan;
      } catch (e) {
        rethrowConstraint(e, { unique: "Feature names must be unique within a plan.", foreignKey: "Unknown product." });
      }
    },
    async findById(id) {
      return (await byId(id))[0] ?? null;
    },
    async list({ productId }) {
      // The id tie-breaker compares bytes on both engines.
      return await db
        .select()
        .from(plans)
        .where(productId ? eq(plans.productId, productId) : undefined)
        .orderBy(asc(plans.createdAt), d.byteOrder(plans.id));
    },
    async lock(id) {
      // FOR NO KEY UPDATE on PostgreSQL: a license issued on the plan (its foreign-key check) is not
      // blocked; on SQLite the unit of work's BEGIN IMMEDIATE holds the write lock already.
      return (await d.forUpdate(byId(id), "no key update"))[0] ?? null;
    },
    async update(id, patch, at) {
      d.requireUnit("plans.update");
      const [row] = await db
        .update(plans)
        .set({ ...patch, updatedAt: at })
        .where(eq(plans.id, id))
        .returning();
      await bumpCatalog();
      return row!;
    },
    async delete(id) {
      d.requireUnit("plans.delete");
      try {
        // Features cascade; licenses reference plans with ON DELETE RESTRICT, so a used plan throws here.
        const [gone] = await db.delete(plans).where(eq(plans.id, id)).returning();
        if (!gone) return null;
        await bumpCatalog();
        return gone;
      } catch (e) {
        rethrowConstraint(e, { foreignKey: "Licenses still use this plan." });
      }
    },
    async features(planId) {
      return await db.select().from(planFeatures).where(eq(planFeatures.planId, planId)).orderBy(d.byteOrder(planFeatures.name));
    },
    async feature(planId, name) {
      return (await db.select().from(planFeatures).where(featureNamed(planId, name)))[0] ?? null;
    },
    async upsertFeature(feature) {
      d.requireUnit("plans.upsertFeature");
      // The same row replaced in place (its id and createdAt kept); returned as stored.
      const [row] = await db
        .insert(planFeatures)
        .values(feature)
        .onConflictDoUpdate({
          target: [planFeatures.planId, planFeatures.name],
          set: { valueType: feature.valueType, value: feature.value, quotaLimit: feature.quotaLimit, quotaPeriod: feature.quotaPeriod, stripeMeter: feature.stripeMeter },
        })
        .returning();
      await bumpCatalog();
      return row!;
    },
    async deleteFeature(planId, name) {
      d.requireUnit("plans.deleteFeature");
      const [gone] = await db.delete(planFeatures).where(featureNamed(planId, name)).returning();
      if (!gone) return null;
      await bumpCatalog();
      return gone;
    },
  };
}
