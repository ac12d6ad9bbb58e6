import { and, asc, eq, sql } from "drizzle-orm";
import { lift, immediate, type DbHandle } from "../../db/client";
import { rethrowConstraint } from "../../db/errors";
import { generations, planFeatures, plans } from "../../db/schema";
import { CATALOG_GENERATION } from "./catalog";
import { writeEffects } from "../outbox/write.sqlite";
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
    async create(plan, features, effects) {
      try {
        return immediate(handle, () => {
          db.insert(plans).values(plan).run();
          for (const f of features) db.insert(planFeatures).values(f).run();
          bumpCatalog();
          writeEffects(db, effects);
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
    async update(id, patch, at, effects) {
      return immediate(handle, () => {
        const before = findById(id);
        if (!before) return null;
        db.update(plans).set({ ...patch, updatedAt: at }).where(eq(plans.id, id)).run();
        bumpCatalog();
        const after = findById(id)!;
        writeEffects(db, effects(before, after));
        return after;
      });
    },
    async delete(id, effects) {
      try {
        return immediate(handle, () => {
          const before = findById(id);
          if (!before) return false;
          // Features cascade; licenses reference plans with ON DELETE RESTRICT, so a used plan throws here.
          db.delete(plans).where(eq(plans.id, id)).run();
          bumpCatalog();
          writeEffects(db, effects(before));
          return true;
        });
      } catch (e) {
        rethrowConstraint(e, { foreignKey: "Licenses still use this plan." });
      }
    },
    async features(planId) {
      return db.select().from(planFeatures).where(eq(planFeatures.planId, planId)).orderBy(asc(planFeatures.name)).all().map(toFeature);
    },
    async upsertFeature(feature, effects) {
      return immediate(handle, () => {
        const before = findFeature(feature.planId, feature.name);
        db.insert(planFeatures)
          .values(feature)
          .onConflictDoUpdate({
            target: [planFeatures.planId, planFeatures.name],
            set: { valueType: feature.valueType, value: feature.value, quotaLimit: feature.quotaLimit, quotaPeriod: feature.quotaPeriod, stripeMeter: feature.stripeMeter },
          })
          .run();
        bumpCatalog();
        const after = findFeature(feature.planId, feature.name)!;
        writeEffects(db, effects(before, after));
        return after;
      });
    },
    async deleteFeature(planId, name, effects) {
      return immediate(handle, () => {
        const before = findFeature(planId, name);
        if (!before) return false;
        db.delete(planFeatures).where(eq(planFeatures.id, before.id)).run();
        bumpCatalog();
        writeEffects(db, effects(before));
        return true;
      });
    },
  };
}
