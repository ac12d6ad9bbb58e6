// OfflineTokenRepo on both engines, written once against the query seam (db/dialect/query.ts): rows
// only; the verbs' units of work (service.ts) lock the license, decide (domain.ts) and write. The one
// lookup that is not written once is verify's (findForVerify): each engine's own, on the miss path
// that must cost the same for every failure (verify-lookup.sqlite.ts, verify-lookup.pg.ts), handed in
// by the engine's wiring (container.ts createSqliteRepos, repos.pg.ts createPgRepos).
import { and, desc, eq, isNull } from "drizzle-orm";
import type { QueryDialect } from "../../db/dialect/query";
import type { LicenseAccess } from "../license-api/repo";
import type { OfflineActivation, OfflineTokenRepo } from "./repo";

/** Verify's offline lookup on one engine (OfflineTokenRepo.findForVerify). */
export type OfflineVerifyLookup = (keyHash: string, identifier: string) => Promise<LicenseAccess | null>;

/** A license's offline activations, newest first: one range of offline_activations_license_created_idx (exported for the query-plan test). */
export const offlineActivationsOfLicenseQuery = (d: QueryDialect, licenseId: string) => {
  const { offlineActivations } = d.tables;
  return d.db
    .select()
    .from(offlineActivations)
    .where(eq(offlineActivations.licenseId, licenseId))
    .orderBy(desc(offlineActivations.createdAt), desc(d.byteOrder(offlineActivations.id)));
};

export function createOfflineTokenRepo(d: QueryDialect, verifyLookup: OfflineVerifyLookup): OfflineTokenRepo {
  const { db } = d;
  const { offlineActivations } = d.tables;
  const liveOf = (licenseId: string) => and(eq(offlineActivations.licenseId, licenseId), isNull(offlineActivations.clearedAt));
  return {
    async findLive(licenseId) {
      return (await db.select().from(offlineActivations).where(liveOf(licenseId)))[0] ?? null;
    },
    async listByLicense(licenseId) {
      return await offlineActivationsOfLicenseQuery(d, licenseId);
    },
    async insert(row) {
      await db.insert(offlineActivations).values(row);
    },
    async clear(licenseId, activationId, at, clearedBy) {
      const [cleared] = await db
        .update(offlineActivations)
        .set({ clearedAt: at, clearedBy })
        .where(and(eq(offlineActivations.id, activationId), liveOf(licenseId)))
        .returning();
      return (cleared as OfflineActivation | undefined) ?? null;
    },
    findForVerify: verifyLookup,
  };
}
