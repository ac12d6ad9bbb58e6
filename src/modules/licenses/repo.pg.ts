import { and, desc, eq, or, sql, type SQL } from "drizzle-orm";
import type { PgHandle, PgExecutor } from "../../db/pg";
import { afterCursor } from "../../db/cursor";
import { rethrowConstraint } from "../../db/errors";
import { activations, floatingSessions, licenseAddons, licenses } from "../../db/schema-pg";
import { likeEscape } from "../../db/like";
import { asciiLower as asciiLowerText } from "../../shared/ascii";
import { writeEffectsPg } from "../outbox/write.pg";
import type { License, LicenseRepo } from "./repo";
import { withPastDueEpisode } from "./domain";

const toLicense = (r: typeof licenses.$inferSelect): License => ({ ...r });

/**
 * SQLite's lower() and LIKE fold ASCII letters only; under the "C" collation PostgreSQL's lower()
 * does the same whatever the database locale, so searches match exactly what they match on SQLite.
 */
const asciiLower = (v: SQL | typeof licenses.email) => sql`lower(${v} COLLATE "C")`;
/** Ids compare bytewise on SQLite; COLLATE "C" keeps PostgreSQL's order and cursor the same. */
const idC = sql`${licenses.id} COLLATE "C"`;

async function readLicense(tx: PgExecutor, id: string, forUpdate = false): Promise<License | null> {
  const q = tx.select().from(licenses).where(eq(licenses.id, id));
  const [r] = forUpdate ? await q.for("update") : await q;
  return r ? toLicense(r) : null;
}

export function createLicenseRepoPg(handle: PgHandle): LicenseRepo {
  const { db } = handle;
  // Hot path (activate/verify): the SQL is built once; postgres.js prepares it on the server.
  const byKeyHash = db.select().from(licenses).where(eq(licenses.keyHash, sql.placeholder("hash"))).prepare("licenses_by_key_hash");

  return {
    async create(license, addonIds, effects) {
      try {
        return await db.transaction(async (tx) => {
          // Durable, as on SQLite: the key goes to a caller that will not ask again.
          await tx.execute(sql`SET LOCAL synchronous_commit = on`);
          await tx.insert(licenses).values(license);
          if (addonIds.length) {
            await tx.insert(licenseAddons).values(addonIds.map((addonId) => ({ licenseId: license.id, addonId, createdAt: license.createdAt })));
          }
          await writeEffectsPg(tx, effects);
          return license;
        });
      } catch (e) {
        rethrowConstraint(e, { unique: "License key collision; retry.", foreignKey: "Unknown product, plan or add-on." });
      }
    },
    findById: (id) => readLicense(db, id),
    async findByKeyHash(hash) {
      const [r] = await byKeyHash.execute({ hash });
      return r ? toLicense(r) : null;
    },
    async list(f) {
      const where: SQL[] = [];
      if (f.productId) where.push(eq(licenses.productId, f.productId));
      if (f.planId) where.push(eq(licenses.planId, f.planId));
      if (f.status) where.push(eq(licenses.status, f.status));
      if (f.externalCustomerId) where.push(eq(licenses.externalCustomerId, f.externalCustomerId));
      if (f.externalWorkspaceId) where.push(eq(licenses.externalWorkspaceId, f.externalWorkspaceId));
      if (f.email) where.push(sql`${asciiLower(licenses.email)} = ${asciiLower(sql`${f.email}::text`)}`);
      if (f.search) {
        const pattern = `%${likeEscape(asciiLowerText(f.search))}%`;
        const terms: SQL[] = [
          sql`${asciiLower(licenses.email)} LIKE ${pattern} ESCAPE '\\'`,
          eq(licenses.externalCustomerId, f.search),
          eq(licenses.externalWorkspaceId, f.search),
          eq(licenses.id, f.search),
        ];
        if (f.searchKeyHash) terms.push(eq(licenses.keyHash, f.searchKeyHash));
        where.push(or(...terms)!);
      }
      // Newest first by (created_at, id); ids are UUIDv7, so the order is total and stable.
      if (f.cursor) where.push(afterCursor(licenses.createdAt, idC, f.cursor));
      const rows = await db
        .select()
        .from(licenses)
        .where(where.length ? and(...where) : undefined)
        .orderBy(desc(licenses.createdAt), desc(idC))
        .limit(f.limit + 1);
      return { items: rows.slice(0, f.limit).map(toLicense), hasMore: rows.length > f.limit };
    },
    async mutate(id, decide, at, effects, opts = {}) {
      try {
        return await db.transaction(async (tx) => {
          // The lock makes decide() see the row as committed and serialises racing mutations, and
          // activations/checkouts (which lock the same row) with a revoke.
          const before = await readLicense(tx, id, true);
          if (!before) return null;
          const patch = withPastDueEpisode(before, decide(before), at);
          // An empty patch changes nothing, updated_at included (a caller that only wanted the lock).
          if (Object.keys(patch).length > 0) await tx.update(licenses).set({ ...patch, updatedAt: at }).where(eq(licenses.id, id));
          if (opts.clearActivations) {
            await tx.delete(activations).where(eq(activations.licenseId, id));
            // DECISIONS: revoke "drops activations and floating sessions".
            await tx.delete(floatingSessions).where(eq(floatingSessions.licenseId, id));
          }
          await writeEffectsPg(tx, effects(before, patch));
          return readLicense(tx, id);
        });
      } catch (e) {
        // A plan deleted between the caller's check and this write.
        rethrowConstraint(e, { foreignKey: "The plan no longer exists." });
      }
    },
    async addonIds(licenseId) {
      // SQLite answers from the (license_id, addon_id) primary-key index: add-on id order.
      const rows = await db
        .select({ id: licenseAddons.addonId })
        .from(licenseAddons)
        .where(eq(licenseAddons.licenseId, licenseId))
        .orderBy(sql`${licenseAddons.addonId} COLLATE "C"`);
      return rows.map((r) => r.id);
    },
    async attachAddon(licenseId, addonId, at, guard, effects) {
      try {
        return await db.transaction(async (tx) => {
          const current = await readLicense(tx, licenseId, true);
          if (!current) return null;
          guard(current);
          const added = await tx
            .insert(licenseAddons)
            .values({ licenseId, addonId, createdAt: at })
            .onConflictDoNothing()
            .returning({ id: licenseAddons.addonId });
          if (added.length) await writeEffectsPg(tx, effects);
          return added.length > 0;
        });
      } catch (e) {
        // An add-on deleted between the caller's check and this write.
        rethrowConstraint(e, { foreignKey: "The add-on no longer exists." });
      }
    },
    async detachAddon(licenseId, addonId, guard, effects) {
      return db.transaction(async (tx) => {
        const current = await readLicense(tx, licenseId, true);
        if (!current) return null;
        guard(current);
        const gone = await tx
          .delete(licenseAddons)
          .where(and(eq(licenseAddons.licenseId, licenseId), eq(licenseAddons.addonId, addonId)))
          .returning({ id: licenseAddons.addonId });
        if (gone.length) await writeEffectsPg(tx, effects);
        return gone.length > 0;
      });
    },
  };
}
