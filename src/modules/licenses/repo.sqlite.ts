import { and, desc, eq, or, sql, type SQL } from "drizzle-orm";
import { lift, immediate, lazyStatement, type DbHandle } from "../../db/client";
import { afterCursor } from "../../db/cursor";
import { rethrowConstraint } from "../../db/errors";
import { activations, floatingSessions, licenseAddons, licenses } from "../../db/schema";
import { likeEscape } from "../../db/like";
import { asciiLower } from "../../shared/ascii";
import { writeEffects } from "../outbox/write.sqlite";
import type { License, LicenseRepo } from "./repo";
import { withPastDueEpisode } from "./domain";

const toLicense = (r: typeof licenses.$inferSelect): License => ({ ...r });


export function createLicenseRepo(handle: DbHandle): LicenseRepo {
  const { db } = handle;
  const byKeyHash = lazyStatement(() => db.select().from(licenses).where(eq(licenses.keyHash, sql.placeholder("hash"))).prepare());
  const byId = lazyStatement(() => db.select().from(licenses).where(eq(licenses.id, sql.placeholder("id"))).prepare());
  const findById = (id: string) => {
    const r = byId().get({ id });
    return r ? toLicense(r) : null;
  };
  const clearActivationsHooks: ((licenseId: string) => void)[] = [
    (licenseId) => db.delete(activations).where(eq(activations.licenseId, licenseId)).run(),
    // DECISIONS: revoke "drops activations and floating sessions".
    (licenseId) => db.delete(floatingSessions).where(eq(floatingSessions.licenseId, licenseId)).run(),
  ];

  return {
    async create(license, addonIds, effects) {
      try {
        // Durable: the key goes to a caller that will not ask again (an integration that emails it, a
        // purchase). A power cut must not leave a key that was handed out but never stored.
        return immediate(
          handle,
          () => {
            db.insert(licenses).values(license).run();
            for (const addonId of addonIds) {
              db.insert(licenseAddons).values({ licenseId: license.id, addonId, createdAt: license.createdAt }).run();
            }
            writeEffects(db, effects);
            return license;
          },
          { durable: true },
        );
      } catch (e) {
        rethrowConstraint(e, { unique: "License key collision; retry.", foreignKey: "Unknown product, plan or add-on." });
      }
    },
    findById: lift(findById),
    async findByKeyHash(hash) {
      const r = byKeyHash().get({ hash });
      return r ? toLicense(r) : null;
    },
    async list(f) {
      const where: SQL[] = [];
      if (f.productId) where.push(eq(licenses.productId, f.productId));
      if (f.planId) where.push(eq(licenses.planId, f.planId));
      if (f.status) where.push(eq(licenses.status, f.status));
      if (f.externalCustomerId) where.push(eq(licenses.externalCustomerId, f.externalCustomerId));
      if (f.externalWorkspaceId) where.push(eq(licenses.externalWorkspaceId, f.externalWorkspaceId));
      if (f.email) where.push(sql`lower(${licenses.email}) = lower(${f.email})`);
      if (f.search) {
        const pattern = `%${likeEscape(asciiLower(f.search))}%`;
        const terms: SQL[] = [
          sql`lower(${licenses.email}) LIKE ${pattern} ESCAPE '\\'`,
          eq(licenses.externalCustomerId, f.search),
          eq(licenses.externalWorkspaceId, f.search),
          eq(licenses.id, f.search),
        ];
        if (f.searchKeyHash) terms.push(eq(licenses.keyHash, f.searchKeyHash));
        where.push(or(...terms)!);
      }
      // Newest first by (created_at, id); ids are UUIDv7, so the order is total and stable.
      if (f.cursor) where.push(afterCursor(licenses.createdAt, licenses.id, f.cursor));
      const rows = db
        .select()
        .from(licenses)
        .where(where.length ? and(...where) : undefined)
        .orderBy(desc(licenses.createdAt), desc(licenses.id))
        .limit(f.limit + 1)
        .all();
      return { items: rows.slice(0, f.limit).map(toLicense), hasMore: rows.length > f.limit };
    },
    async mutate(id, decide, at, effects, opts = {}) {
      try {
        return immediate(handle, () => {
          const before = findById(id);
          if (!before) return null;
          const patch = withPastDueEpisode(before, decide(before), at);
          // An empty patch changes nothing, updated_at included (a caller that only wanted the lock).
          if (Object.keys(patch).length > 0) db.update(licenses).set({ ...patch, updatedAt: at }).where(eq(licenses.id, id)).run();
          if (opts.clearActivations) for (const clear of clearActivationsHooks) clear(id);
          writeEffects(db, effects(before, patch));
          return findById(id);
        });
      } catch (e) {
        // A plan deleted between the caller's check and this write.
        rethrowConstraint(e, { foreignKey: "The plan no longer exists." });
      }
    },
    async addonIds(licenseId) {
      return db.select({ id: licenseAddons.addonId }).from(licenseAddons).where(eq(licenseAddons.licenseId, licenseId)).all().map((r) => r.id);
    },
    async attachAddon(licenseId, addonId, at, guard, effects) {
      try {
        return immediate(handle, () => {
          const current = findById(licenseId);
          if (!current) return null;
          guard(current);
          const added = db
            .insert(licenseAddons)
            .values({ licenseId, addonId, createdAt: at })
            .onConflictDoNothing()
            .returning({ id: licenseAddons.addonId })
            .all();
          if (added.length) writeEffects(db, effects);
          return added.length > 0;
        });
      } catch (e) {
        // An add-on deleted between the caller's check and this write.
        rethrowConstraint(e, { foreignKey: "The add-on no longer exists." });
      }
    },
    async detachAddon(licenseId, addonId, guard, effects) {
      return immediate(handle, () => {
        const current = findById(licenseId);
        if (!current) return null;
        guard(current);
        const gone = db
          .delete(licenseAddons)
          .where(and(eq(licenseAddons.licenseId, licenseId), eq(licenseAddons.addonId, addonId)))
          .returning({ id: licenseAddons.addonId })
          .all();
        if (gone.length) writeEffects(db, effects);
        return gone.length > 0;
      });
    },
  };
}
