import { and, asc, eq, sql } from "drizzle-orm";
import type { PgHandle, PgExecutor } from "../../db/pg";
import { rethrowConstraint } from "../../db/errors";
import { generations, planFeatures, plans } from "../../db/schema-pg";
import { CATALOG_GENERATION } from "./catalog";
import { writeEffectsPg } from "../outbox/write.pg";
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

/**
 * Feature writers lock their plan's row first, so writers of one plan's features run one after the
 * other and `audit` sees the feature exactly as it was replaced (a feature being inserted has no row
 * to lock yet). NO KEY UPDATE leaves foreign-key checks (a license created on the plan) unblocked.
 */
const lockPlan = (tx: PgExecutor, planId: string) => findPlan(tx, planId, "no key update");

export function createPlanRepoPg(handle: PgHandle): PlanRepo {
  const { db } = handle;
  return {
    async create(plan, features, effects) {
      try {
        return await db.transaction(async (tx) => {
          await tx.insert(plans).values(plan);
          if (features.length > 0) await tx.insert(planFeatures).values(features);
          await bumpCatalog(tx);
          await writeEffectsPg(tx, effects);
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
    async update(id, patch, at, effects) {
      return await db.transaction(async (tx) => {
        const before = await findPlan(tx, id, "no key update");
        if (!before) return null;
        const [row] = await tx
          .update(plans)
          .set({ ...patch, updatedAt: at })
          .where(eq(plans.id, id))
          .returning();
        await bumpCatalog(tx);
        const after = toPlan(row!);
        await writeEffectsPg(tx, effects(before, after));
        return after;
      });
    },
    async delete(id, effects) {
      try {
        return await db.transaction(async (tx) => {
          const before = await findPlan(tx, id, "update");
          if (!before) return false;
          // Features cascade; licenses reference plans with ON DELETE RESTRICT, so a used plan throws here.
          await tx.delete(plans).where(eq(plans.id, id));
          await bumpCatalog(tx);
          await writeEffectsPg(tx, effects(before));
          return true;
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
    async upsertFeature(feature, effects) {
      return await db.transaction(async (tx) => {
        await lockPlan(tx, feature.planId);
        const before = await findFeature(tx, feature.planId, feature.name);
        const [row] = await tx
          .insert(planFeatures)
          .values(feature)
          .onConflictDoUpdate({
            target: [planFeatures.planId, planFeatures.name],
            set: { valueType: feature.valueType, value: feature.value, quotaLimit: feature.quotaLimit, quotaPeriod: feature.quotaPeriod, stripeMeter: feature.stripeMeter },
          })
          .returning();
        await bumpCatalog(tx);
        const after = toFeature(row!);
        await writeEffectsPg(tx, effects(before, after));
        return after;
      });
    },
    async deleteFeature(planId, name, effects) {
      return await db.transaction(async (tx) => {
        await lockPlan(tx, planId);
        const before = await findFeature(tx, planId, name);
        if (!before) return false;
        await tx.delete(planFeatures).where(eq(planFeatures.id, before.id));
        await bumpCatalog(tx);
        await writeEffectsPg(tx, effects(before));
        return true;
      });
    },
  };
}
