import { and, asc, desc, eq, gt, gte, isNotNull, lt, lte, or, sql, type SQL } from "drizzle-orm";
import { lift, immediate, lazyStatement, type Db, type DbHandle } from "../../db/client";
import { rethrowConstraint } from "../../db/errors";
import { activations, floatingSessions, licenseAddons, licenses } from "../../db/schema";
import { asciiLower } from "../../shared/ascii";
import { writeEffects } from "../outbox/write.sqlite";
import type { License, LicenseListFilter, LicenseRepo } from "./repo";
import { licenseListOrder, prefixUpperBound } from "./listing";
import { withPastDueEpisode } from "./domain";

const toLicense = (r: typeof licenses.$inferSelect): License => ({ ...r });

const emailLower = sql`lower(${licenses.email})`;
const emailDomain = sql`lower(substr(${licenses.email}, instr(${licenses.email}, '@') + 1))`;

/**
 * The admin list's statement (exported so the contract test can EXPLAIN exactly it). Every filter is
 * an equality (or range) on a prefix of one index ending in the order's columns (listing.ts), and the
 * cursor is a range on the order's leading column with the ties left to the residual condition, so
 * the read starts at the cursor and stops after limit + 1 rows.
 */
export function licenseListQuery(db: Db, f: LicenseListFilter) {
  const where: SQL[] = [];
  if (f.productId) where.push(eq(licenses.productId, f.productId));
  if (f.planId) where.push(eq(licenses.planId, f.planId));
  if (f.status) where.push(eq(licenses.status, f.status));
  if (f.id !== undefined) where.push(eq(licenses.id, f.id));
  if (f.keyHash !== undefined) where.push(eq(licenses.keyHash, f.keyHash));
  if (f.keyHint !== undefined) where.push(eq(licenses.keyHint, f.keyHint));
  if (f.externalCustomerId !== undefined) where.push(eq(licenses.externalCustomerId, f.externalCustomerId));
  if (f.externalWorkspaceId !== undefined) where.push(eq(licenses.externalWorkspaceId, f.externalWorkspaceId));
  if (f.email !== undefined) where.push(sql`${emailLower} = ${asciiLower(f.email)}`);
  if (f.emailDomain !== undefined) where.push(sql`${emailDomain} = ${asciiLower(f.emailDomain)}`);
  if (f.emailPrefix !== undefined) {
    const p = asciiLower(f.emailPrefix);
    where.push(sql`${emailLower} >= ${p}`);
    const upper = prefixUpperBound(p);
    if (upper !== null) where.push(sql`${emailLower} < ${upper}`);
  }
  if (f.createdAfter) where.push(gte(licenses.createdAt, f.createdAfter));
  if (f.createdBefore) where.push(lt(licenses.createdAt, f.createdBefore));
  if (f.expiringBefore) where.push(isNotNull(licenses.validUntil), lte(licenses.validUntil, f.expiringBefore));
  const order = licenseListOrder(f);
  const c = f.cursor;
  let orderBy: SQL[];
  if (order === "valid_until") {
    if (c) where.push(gte(licenses.validUntil, new Date(c.t)), or(gt(licenses.validUntil, new Date(c.t)), gt(licenses.id, c.id))!);
    orderBy = [asc(licenses.validUntil), asc(licenses.id)];
  } else if (order === "email") {
    if (c) {
      const at = new Date(c.t);
      where.push(sql`${emailLower} >= ${c.e!}`, or(sql`${emailLower} > ${c.e!}`, gt(licenses.createdAt, at), and(eq(licenses.createdAt, at), gt(licenses.id, c.id)))!);
    }
    orderBy = [asc(emailLower), asc(licenses.createdAt), asc(licenses.id)];
  } else {
    if (c) where.push(lte(licenses.createdAt, new Date(c.t)), or(lt(licenses.createdAt, new Date(c.t)), lt(licenses.id, c.id))!);
    // Newest first by (created_at, id); ids are UUIDv7, so the order is total and stable.
    orderBy = [desc(licenses.createdAt), desc(licenses.id)];
  }
  // A unique lookup (id, key) reads one row: no order to keep.
  if (f.id !== undefined || f.keyHash !== undefined) orderBy = [];
  return db
    .select()
    .from(licenses)
    .where(where.length ? and(...where) : undefined)
    .orderBy(...orderBy)
    .limit(f.limit + 1);
}


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
      const rows = licenseListQuery(db, f).all();
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
