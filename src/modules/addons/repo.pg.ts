import { asc, eq, sql } from "drizzle-orm";
import type { PgHandle, PgExecutor } from "../../db/pg";
import { rethrowConstraint } from "../../db/errors";
import { addons, licenseAddons } from "../../db/schema-pg";
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
    async create(addon) {
      try {
        await db.insert(addons).values(addon);
        return addon;
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
    // Locked: the verb judges the row it replaces, even when another node edits it at the same time.
    lock: (id) => findAddon(db, id, "no key update"),
    async update(id, patch, at) {
      try {
        const [row] = await db
          .update(addons)
          .set({ ...patch, updatedAt: at })
          .where(eq(addons.id, id))
          .returning();
        return toAddon(row!);
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
        .orderBy(asc(licenseAddons.createdAt), sql`${addons.id} COLLATE "C"`);
      return rows.map((r) => toAddon(r.addon));
    },
  };
}
