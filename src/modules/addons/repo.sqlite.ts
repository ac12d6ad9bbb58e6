import { asc, eq } from "drizzle-orm";
import { lift, type DbHandle } from "../../db/client";
import { rethrowConstraint } from "../../db/errors";
import { addons, licenseAddons } from "../../db/schema";
import type { Addon, AddonRepo } from "./repo";

const toAddon = (r: typeof addons.$inferSelect): Addon => ({ ...r });

export function createAddonRepo(handle: DbHandle): AddonRepo {
  const { db } = handle;
  const findById = (id: string) => {
    const r = db.select().from(addons).where(eq(addons.id, id)).get();
    return r ? toAddon(r) : null;
  };
  return {
    async create(addon) {
      try {
        db.insert(addons).values(addon).run();
        return addon;
      } catch (e) {
        rethrowConstraint(e, { unique: `The product already has an add-on named "${addon.name}".`, foreignKey: "Unknown product." });
      }
    },
    findById: lift(findById),
    async list({ productId }) {
      const q = db.select().from(addons);
      return (productId ? q.where(eq(addons.productId, productId)) : q).orderBy(asc(addons.createdAt), asc(addons.id)).all().map(toAddon);
    },
    // The unit of work's BEGIN IMMEDIATE holds the write lock already.
    lock: lift(findById),
    async update(id, patch, at) {
      try {
        db.update(addons)
          .set({ ...patch, updatedAt: at })
          .where(eq(addons.id, id))
          .run();
        return findById(id)!;
      } catch (e) {
        rethrowConstraint(e, { unique: "The product already has an add-on with this name." });
      }
    },
    async delete(id) {
      try {
        // license_addons references add-ons with ON DELETE RESTRICT: an attached add-on throws here.
        db.delete(addons).where(eq(addons.id, id)).run();
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
