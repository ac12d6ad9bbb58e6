// AddonRepo on both engines, written once against the query seam (db/dialect/query.ts): rows and the
// row lock; the verbs (service.ts) decide (domain.ts addonPatch) and audit in the same unit of work.
import { asc, eq } from "drizzle-orm";
import type { QueryDialect } from "../../db/dialect/query";
import { rethrowConstraint } from "../../db/errors";
import type { AddonRepo } from "./repo";

export function createAddonRepo(d: QueryDialect): AddonRepo {
  const { db } = d;
  const { addons, licenseAddons } = d.tables;
  const byId = (id: string) => db.select().from(addons).where(eq(addons.id, id));
  return {
    async create(addon) {
      try {
        await db.insert(addons).values(addon);
        return addon;
      } catch (e) {
        rethrowConstraint(e, { unique: `The product already has an add-on named "${addon.name}".`, foreignKey: "Unknown product." });
      }
    },
    async findById(id) {
      return (await byId(id))[0] ?? null;
    },
    async list({ productId }) {
      // The id tie-breaker compares bytes on both engines.
      return await db
        .select()
        .from(addons)
        .where(productId ? eq(addons.productId, productId) : undefined)
        .orderBy(asc(addons.createdAt), d.byteOrder(addons.id));
    },
    async lock(id) {
      // Locked (PostgreSQL: FOR NO KEY UPDATE; SQLite: the unit's write lock): the verb judges the row
      // it replaces, even when another node edits it at the same time.
      return (await d.forUpdate(byId(id), "no key update"))[0] ?? null;
    },
    async update(id, patch, at) {
      try {
        const [row] = await db
          .update(addons)
          .set({ ...patch, updatedAt: at })
          .where(eq(addons.id, id))
          .returning();
        return row!;
      } catch (e) {
        rethrowConstraint(e, { unique: "The product already has an add-on with this name." });
      }
    },
    async delete(id) {
      try {
        // license_addons references add-ons with ON DELETE RESTRICT: an attached add-on throws here.
        await db.delete(addons).where(eq(addons.id, id));
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
        .orderBy(asc(licenseAddons.createdAt), d.byteOrder(addons.id));
      return rows.map((r) => r.addon);
    },
  };
}
