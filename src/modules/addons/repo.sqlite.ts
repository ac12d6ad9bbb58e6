import { asc, eq } from "drizzle-orm";
import { lift, immediate, type DbHandle } from "../../db/client";
import { rethrowConstraint } from "../../db/errors";
import { addons, licenseAddons } from "../../db/schema";
import { writeEffects } from "../outbox/write.sqlite";
import type { Addon, AddonRepo } from "./repo";

const toAddon = (r: typeof addons.$inferSelect): Addon => ({ ...r });

export function createAddonRepo(handle: DbHandle): AddonRepo {
  const { db } = handle;
  const findById = (id: string) => {
    const r = db.select().from(addons).where(eq(addons.id, id)).get();
    return r ? toAddon(r) : null;
  };
  return {
    async create(addon, effects) {
      try {
        return immediate(handle, () => {
          db.insert(addons).values(addon).run();
          writeEffects(db, effects);
          return addon;
        });
      } catch (e) {
        rethrowConstraint(e, { unique: `The product already has an add-on named "${addon.name}".`, foreignKey: "Unknown product." });
      }
    },
    findById: lift(findById),
    async list({ productId }) {
      const q = db.select().from(addons);
      return (productId ? q.where(eq(addons.productId, productId)) : q).orderBy(asc(addons.createdAt), asc(addons.id)).all().map(toAddon);
    },
    async update(id, decide, at, effects) {
      try {
        return immediate(handle, () => {
          const before = findById(id);
          if (!before) return null;
          db.update(addons)
            .set({ ...decide(before), updatedAt: at })
            .where(eq(addons.id, id))
            .run();
          const after = findById(id)!;
          writeEffects(db, effects(before, after));
          return after;
        });
      } catch (e) {
        rethrowConstraint(e, { unique: "The product already has an add-on with this name." });
      }
    },
    async delete(id, effects) {
      try {
        return immediate(handle, () => {
          const before = findById(id);
          if (!before) return false;
          // license_addons references add-ons with ON DELETE RESTRICT: an attached add-on throws here.
          db.delete(addons).where(eq(addons.id, id)).run();
          writeEffects(db, effects(before));
          return true;
        });
      } catch (e) {
        rethrowConstraint(e, { foreignKey: "Licenses still have this add-on attached; detach it first." });
      }
    },
    async forLicense(licenseId) {
      return db
        .select({ addon: addons })
        .from(licenseAddons)
        .innerJoin(addons, eq(addons.id, licenseAddons.addonId))
        .where(eq(licenseAddons.licenseId, licenseId))
        .orderBy(asc(licenseAddons.createdAt), asc(addons.id))
        .all()
        .map((r) => toAddon(r.addon));
    },
  };
}
