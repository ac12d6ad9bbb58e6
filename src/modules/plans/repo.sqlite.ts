import { and, asc, eq, sql } from "drizzle-orm";
import { lift, immediate, type DbHandle } from "../../db/client";
import { rethrowConstraint } from "../../db/errors";
import { generations, planFeatures, plans } from "../../db/schema";
import { CATALOG_GENERATION } from "./catalog";
import type { Plan, PlanFeature, PlanRepo } from "./repo";

const toPlan = (r: typeof plans.$inferSelect): Plan => ({ ...r });
const toFeature = (r: typeof planFeatures.$inferSelect): PlanFeature => ({ ...r });

export function createPlanRepo(handle: DbHandle): PlanRepo {
  const { db } = handle;
  // Every write below bumps the catalog generation in its transaction: verify's plan cache
  // (catalog-cache.ts) on every node reads it and drops what it holds.
  const bumpCatalog = () =>
    db
      .insert(generations)
      .values({ name: CATALOG_GENERATION, value: 1 })
      .onConflictDoUpdate({ target: generations.name, set: { value: sql`${generations.value} + 1` } })
      .run();
  const findById = (id: string) => {
    const r = db.select().from(plans).where(eq(plans.id, id)).get();
    return r ? toPlan(r) : null;
  };
  const findFeature = (planId: string, name: string) => {
    const r = db
      .select()
      .from(planFeatures)
      .where(and(eq(planFeatures.planId, planId), eq(planFeatures.name, name)))
      .get();
    return r ? toFeature(r) : null;
  };
  return {
    async create(plan, features) {
      try {
        return immediate(handle, () => {
          db.insert(plans).values(plan).run();
          for (const f of features) db.insert(planFeatures).values(f).run();
          bumpCatalog();
          return plan;
        });
      } catch (e) {
        rethrowConstraint(e, { unique: "Feature names must be unique within a plan.", foreignKey: "Unknown product." });
      }
    },
    findById: lift(findById),
    async list({ productId }) {
      const q = db.select().from(plans);
      return (productId ? q.where(eq(plans.productId, productId)) : q).orderBy(asc(plans.createdAt), asc(plans.id)).all().map(toPlan);
    },
    // The unit of work's BEGIN IMMEDIATE holds the write lock already.
    lock: lift(findById),
    async update(id, patch, at) {
      return immediate(handle, () => {
        db.update(plans).set({ ...patch, updatedAt: at }).where(eq(plans.id, id)).run();
        bumpCatalog();
        return findById(id)!;
      });
    },
    async delete(id) {
      try {
        return immediate(handle, () => {
          // Features cascade; licenses reference plans with ON DELETE RESTRICT, so a used plan throws here.
          const [gone] = db.delete(plans).where(eq(plans.id, id)).returning().all();
          if (!gone) return null;
          bumpCatalog();
          return toPlan(gone);
        });
      } catch (e) {
        rethrowConstraint(e, { foreignKey: "Licenses still use this plan." });
      }
    },
    async features(planId) {
      return db.select().from(planFeatures).where(eq(planFeatures.planId, planId)).orderBy(asc(planFeatures.name)).all().map(toFeature);
    },
    feature: lift(findFeature),
    async upsertFeature(feature) {
      return immediate(handle, () => {
        db.insert(planFeatures)
          .values(feature)
          .onConflictDoUpdate({
            target: [planFeatures.planId, planFeatures.name],
            set: { valueType: feature.valueType, value: feature.value, quotaLimit: feature.quotaLimit, quotaPeriod: feature.quotaPeriod, stripeMeter: feature.stripeMeter },
          })
          .run();
        bumpCatalog();
        return findFeature(feature.planId, feature.name)!;
      });
    },
    async deleteFeature(planId, name) {
      return immediate(handle, () => {
        const [gone] = db.delete(planFeatures).where(and(eq(planFeatures.planId, planId), eq(planFeatures.name, name))).returning().all();
        if (!gone) return null;
        bumpCatalog();
        return toFeature(gone);
      });
    },
  };
}
