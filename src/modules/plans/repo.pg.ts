import { and, asc, eq, sql } from "drizzle-orm";
import { atomically, type PgHandle, type PgExecutor } from "../../db/pg";
import { rethrowConstraint } from "../../db/errors";
import { generations, planFeatures, plans } from "../../db/schema-pg";
import { CATALOG_GENERATION } from "./catalog";
import type { Plan, PlanFeature, PlanRepo } from "./repo";

const toPlan = (r: typeof plans.$inferSelect): Plan => ({ ...r });
const toFeature = (r: typeof planFeatures.$inferSelect): PlanFeature => ({ ...r });

async function findPlan(tx: PgExecutor, id: string, lock?: "update" | "no key update"): Promise<Plan | null> {
  const q = tx.select().from(plans).where(eq(plans.id, id));
  const [r] = lock ? await q.for(lock) : await q;
  return r ? toPlan(r) : null;
}

async function findFeature(tx: PgExecutor, planId: string, name: string): Promise<PlanFeature | null> {
  const [r] = await tx
    .select()
    .from(planFeatures)
    .where(and(eq(planFeatures.planId, planId), eq(planFeatures.name, name)));
  return r ? toFeature(r) : null;
}

/**
 * Every write to plans or features bumps the catalog generation in its transaction: verify's plan
 * cache (catalog-cache.ts) on every node reads it and drops what it holds.
 */
const bumpCatalog = (tx: PgExecutor) =>
  tx
    .insert(generations)
    .values({ name: CATALOG_GENERATION, value: 1 })
    .onConflictDoUpdate({ target: generations.name, set: { value: sql`${generations.value} + 1` } });


export function createPlanRepoPg(handle: PgHandle): PlanRepo {
  const { db } = handle;
  return {
    async create(plan, features) {
      try {
        return await atomically(handle, async (tx) => {
          await tx.insert(plans).values(plan);
          if (features.length > 0) await tx.insert(planFeatures).values(features);
          await bumpCatalog(tx);
          return plan;
        });
      } catch (e) {
        rethrowConstraint(e, { unique: "Feature names must be unique within a plan.", foreignKey: "Unknown product." });
      }
    },
    findById: (id) => findPlan(db, id),
    async list({ productId }) {
      const q = db.select().from(plans);
      // COLLATE "C": the id tie-breaker compares bytes, as SQLite does.
      const rows = await (productId ? q.where(eq(plans.productId, productId)) : q).orderBy(asc(plans.createdAt), sql`${plans.id} COLLATE "C"`);
      return rows.map(toPlan);
    },
    lock: (id) => findPlan(db, id, "no key update"),
    update: (id, patch, at) =>
      atomically(handle, async (tx) => {
        const [row] = await tx
          .update(plans)
          .set({ ...patch, updatedAt: at })
          .where(eq(plans.id, id))
          .returning();
        await bumpCatalog(tx);
        return toPlan(row!);
      }),
    async delete(id) {
      try {
        // Features cascade; licenses reference plans with ON DELETE RESTRICT, so a used plan throws here.
        return await atomically(handle, async (tx) => {
          const [gone] = await tx.delete(plans).where(eq(plans.id, id)).returning();
          if (!gone) return null;
          await bumpCatalog(tx);
          return toPlan(gone);
        });
      } catch (e) {
        rethrowConstraint(e, { foreignKey: "Licenses still use this plan." });
      }
    },
    async features(planId) {
      const rows = await db
        .select()
        .from(planFeatures)
        .where(eq(planFeatures.planId, planId))
        .orderBy(sql`${planFeatures.name} COLLATE "C"`);
      return rows.map(toFeature);
    },
    feature: (planId, name) => findFeature(db, planId, name),
    upsertFeature: (feature) =>
      atomically(handle, async (tx) => {
        const [row] = await tx
          .insert(planFeatures)
          .values(feature)
          .onConflictDoUpdate({
            target: [planFeatures.planId, planFeatures.name],
            set: { valueType: feature.valueType, value: feature.value, quotaLimit: feature.quotaLimit, quotaPeriod: feature.quotaPeriod, stripeMeter: feature.stripeMeter },
          })
          .returning();
        await bumpCatalog(tx);
        return toFeature(row!);
      }),
    deleteFeature: (planId, name) =>
      atomically(handle, async (tx) => {
        const [gone] = await tx
          .delete(planFeatures)
          .where(and(eq(planFeatures.planId, planId), eq(planFeatures.name, name)))
          .returning();
        if (!gone) return null;
        await bumpCatalog(tx);
        return toFeature(gone);
      }),
  };
}
