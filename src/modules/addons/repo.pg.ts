import { asc, eq, sql } from "drizzle-orm";
import type { PgHandle, PgExecutor } from "../../db/pg";
import { rethrowConstraint } from "../../db/errors";
import { addons, licenseAddons } from "../../db/schema-pg";
import { writeEffectsPg } from "../outbox/write.pg";
import type { Addon, AddonRepo } from "./repo";

const toAddon = (r: typeof addons.$inferSelect): Addon => ({ ...r });

async function findAddon(tx: PgExecutor, id: string, lock?: "update" | "no key update"): Promise<Addon | null> {
  const q = tx.select().from(addons).where(eq(addons.id, id));
  const [r] = lock ? await q.for(lock) : await q;
  return r ? toAddon(r) : null;
}

export function createAddonRepoPg(handle: PgHandle): AddonRepo {
  const { db } = handle;
  return {
    async create(addon, effects) {
      try {
        return await db.transaction(async (tx) => {
          await tx.insert(addons).values(addon);
          await writeEffectsPg(tx, effects);
          return addon;
        });
      } catch (e) {
        rethrowConstraint(e, { unique: `The product already has an add-on named "${addon.name}".`, foreignKey: "Unknown product." });
      }
    },
    findById: (id) => findAddon(db, id),
    async list({ productId }) {
      const q = db.select().from(addons);
      // COLLATE "C": the id tie-breaker compares bytes, as SQLite does.
      const rows = await (productId ? q.where(eq(addons.productId, productId)) : q).orderBy(asc(addons.createdAt), sql`${addons.id} COLLATE "C"`);
      return rows.map(toAddon);
    },
    async update(id, decide, at, effects) {
      try {
        return await db.transaction(async (tx) => {
          // Locked: `decide` judges the row it replaces, even when another node edits it at the same time.
          const before = await findAddon(tx, id, "no key update");
          if (!before) return null;
          const [row] = await tx
            .update(addons)
            .set({ ...decide(before), updatedAt: at })
            .where(eq(addons.id, id))
            .returning();
          const after = toAddon(row!);
          await writeEffectsPg(tx, effects(before, after));
          return after;
        });
      } catch (e) {
        rethrowConstraint(e, { unique: "The product already has an add-on with this name." });
      }
    },
    async delete(id, effects) {
      try {
        return await db.transaction(async (tx) => {
          const before = await findAddon(tx, id, "update");
          if (!before) return false;
          // license_addons references add-ons with ON DELETE RESTRICT: an attached add-on throws here.
          await tx.delete(addons).where(eq(addons.id, id));
          await writeEffectsPg(tx, effects(before));
          return true;
        });
      } catch (e) {
        rethrowConstraint(e, { foreignKey: "Licenses still have this add-on attached; detach it first." });
      }
    },
    async forLicense(licenseId) {
      const rows = await db
        .select({ addon: addons })
        .from(licenseAddons)
        .innerJoin(addons, eq(addons.id, licenseAddons.addonId))
        .where(eq(licenseAddons.licenseId, licenseId))
        .orderBy(asc(licenseAddons.createdAt), sql`${addons.id} COLLATE "C"`);
      return rows.map((r) => toAddon(r.addon));
    },
  };
}
