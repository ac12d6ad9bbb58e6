import { and, desc, eq, isNull, sql } from "drizzle-orm";
import { immediate, lazyStatement, type DbHandle } from "../../db/client";
import { offlineActivations, plans } from "../../db/schema";
import { writeEffects } from "../outbox/write.sqlite";
import { createLicenseAccessReaders } from "../license-api/repo.sqlite";
import type { OfflineAccess, OfflineActivation, NewOfflineActivation, OfflineTokenRepo, SelfServiceOutcome } from "./repo";

/** A license's offline activations, newest first: one range of offline_activations_license_created_idx (exported for the query-plan test). */
export const offlineActivationsOfLicenseQuery = (db: DbHandle["db"], licenseId: string) =>
  db
    .select()
    .from(offlineActivations)
    .where(eq(offlineActivations.licenseId, licenseId))
    .orderBy(desc(offlineActivations.createdAt), desc(offlineActivations.id));

export function createOfflineTokenRepo(handle: DbHandle): OfflineTokenRepo {
  const { db } = handle;
  const readers = createLicenseAccessReaders(handle);
  const liveForVerify = lazyStatement(() =>
    handle.sqlite.prepare<{ one: number }, [string, string]>(
      `SELECT 1 AS one FROM offline_activations o JOIN licenses l ON l.id = o.license_id
        WHERE l.key_hash = ? AND o.identifier = ? AND o.cleared_at IS NULL LIMIT 1`,
    ),
  );
  const settingOf = lazyStatement(() =>
    db.select({ on: plans.portalOfflineActivation }).from(plans).where(eq(plans.id, sql.placeholder("id"))).prepare(),
  );
  /** The license and its plan (the public API's prepared reads), with the plan's setting. */
  const findAccess = (licenseId: string): OfflineAccess | null => {
    const access = readers.findById(licenseId);
    if (!access) return null;
    const setting = settingOf().get({ id: access.plan.id });
    return { license: access.license, plan: { ...access.plan, portalOfflineActivation: setting?.on ?? false } };
  };
  const liveOf = (licenseId: string) => and(eq(offlineActivations.licenseId, licenseId), isNull(offlineActivations.clearedAt));
  const findLive = (licenseId: string): OfflineActivation | null => db.select().from(offlineActivations).where(liveOf(licenseId)).get() ?? null;
  return {
    async issue(licenseId, decide) {
      return immediate(handle, () => {
        const { result, effects } = decide(findAccess(licenseId));
        writeEffects(db, effects);
        return result;
      });
    },
    async activate<T>(licenseId: string, decide: (current: OfflineAccess | null) => NewOfflineActivation<T>) {
      return immediate(handle, (): SelfServiceOutcome<T> => {
        const current = findAccess(licenseId);
        const existing = current ? findLive(licenseId) : null;
        if (existing) return { kind: "taken", existing };
        const { result, effects, activation } = decide(current);
        const row: OfflineActivation = { ...activation, licenseId, clearedAt: null, clearedBy: null };
        db.insert(offlineActivations).values(row).run();
        writeEffects(db, effects);
        return { kind: "created", activation: row, result };
      });
    },
    async findAccess(licenseId) {
      return findAccess(licenseId);
    },
    async findLive(licenseId) {
      return findLive(licenseId);
    },
    async listByLicense(licenseId) {
      return offlineActivationsOfLicenseQuery(db, licenseId).all();
    },
    async clear(licenseId, activationId, at, clearedBy, effects) {
      return immediate(handle, () => {
        const [cleared] = db
          .update(offlineActivations)
          .set({ clearedAt: at, clearedBy })
          .where(and(eq(offlineActivations.id, activationId), liveOf(licenseId)))
          .returning()
          .all();
        if (!cleared) return null;
        writeEffects(db, effects(cleared));
        return cleared;
      });
    },
    async findForVerify(keyHash, identifier) {
      // Verify's miss path for every failure class with a well-formed key: one prepared statement
      // that costs the same whether the key, the license or the activation is missing, so the
      // latency of verify's 404 tells nothing (spec design rule 4; test/reliability/oracle.test.ts).
      if (!liveForVerify().get(keyHash, identifier)) return null;
      return readers.findByKeyHash(keyHash);
    },
  };
}
