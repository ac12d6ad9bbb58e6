// LicenseRepo on both engines, written once against the query seam (db/dialect/query.ts). The one
// statement that is not is the admin list's: each engine's own, measured at a million licenses
// (list-query.sqlite.ts with SQLite's planner hints, list-query.pg.ts without them), handed in by the
// engine's wiring (container.ts createSqliteRepos, repos.pg.ts createPgRepos) so that neither engine
// loads the other's schema.
import { and, eq, sql } from "drizzle-orm";
import type { QueryDialect } from "../../db/dialect/query";
import { rethrowConstraint } from "../../db/errors";
import type { License, LicenseListFilter, LicenseRepo } from "./repo";

/** The admin list's statement on one engine: up to `f.limit + 1` rows in the filter's order. */
export type LicenseListQuery = (f: LicenseListFilter) => PromiseLike<License[]>;

export function createLicenseRepo(d: QueryDialect, listQuery: LicenseListQuery): LicenseRepo {
  const { db } = d;
  const { activations, floatingSessions, licenseAddons, licenses } = d.tables;
  // Hot path (activate/verify): the statement is built once, on its first use.
  const byKeyHash = d.prepared("licenses_by_key_hash", () => db.select().from(licenses).where(eq(licenses.keyHash, sql.placeholder("hash"))));
  const byId = d.prepared("license_by_id", () => db.select().from(licenses).where(eq(licenses.id, sql.placeholder("id"))));
  const findById = async (id: string): Promise<License | null> => (await byId({ id }))[0] ?? null;

  return {
    async create(license, addonIds) {
      if (addonIds.length) d.requireUnit("licenses.create");
      try {
        await db.insert(licenses).values(license);
        if (addonIds.length) {
          await db.insert(licenseAddons).values(addonIds.map((addonId) => ({ licenseId: license.id, addonId, createdAt: license.createdAt })));
        }
        return license;
      } catch (e) {
        rethrowConstraint(e, { unique: "License key collision; retry.", foreignKey: "Unknown product, plan or add-on." });
      }
    },
    findById,
    async findByKeyHash(hash) {
      return (await byKeyHash({ hash }))[0] ?? null;
    },
    async list(f) {
      const rows = await listQuery(f);
      return { items: rows.slice(0, f.limit), hasMore: rows.length > f.limit };
    },
    async update(id, patch, at, opts = {}) {
      try {
        // An empty patch changes nothing, updated_at included (a caller that only wanted the lock).
        const [written] = Object.keys(patch).length > 0 ? await db.update(licenses).set({ ...patch, updatedAt: at }).where(eq(licenses.id, id)).returning() : [];
        if (opts.clearActivations) {
          await db.delete(activations).where(eq(activations.licenseId, id));
          // DECISIONS: revoke "drops activations and floating sessions".
          await db.delete(floatingSessions).where(eq(floatingSessions.licenseId, id));
        }
        return (written ?? (await findById(id)))!;
      } catch (e) {
        // A plan deleted between the caller's check and this write.
        rethrowConstraint(e, { foreignKey: "The plan no longer exists." });
      }
    },
    async lock(id) {
      return (await d.forUpdate(db.select().from(licenses).where(eq(licenses.id, id))))[0] ?? null;
    },
    async addonIds(licenseId) {
      // SQLite answers from the (license_id, addon_id) primary-key index: add-on id order, by bytes
      // on both engines.
      const rows = await db
        .select({ id: licenseAddons.addonId })
        .from(licenseAddons)
        .where(eq(licenseAddons.licenseId, licenseId))
        .orderBy(d.byteOrder(licenseAddons.addonId));
      return rows.map((r) => r.id);
    },
    async attachAddon(licenseId, addonId, at) {
      try {
        const added = await db.insert(licenseAddons).values({ licenseId, addonId, createdAt: at }).onConflictDoNothing().returning({ id: licenseAddons.addonId });
        return added.length > 0;
      } catch (e) {
        // An add-on deleted between the caller's check and this write.
        rethrowConstraint(e, { foreignKey: "The add-on no longer exists." });
      }
    },
    async detachAddon(licenseId, addonId) {
      const gone = await db
        .delete(licenseAddons)
        .where(and(eq(licenseAddons.licenseId, licenseId), eq(licenseAddons.addonId, addonId)))
        .returning({ id: licenseAddons.addonId });
      return gone.length > 0;
    },
  };
}
