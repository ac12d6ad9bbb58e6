import { and, desc, eq, isNull, sql } from "drizzle-orm";
import type { PgExecutor, PgHandle } from "../../db/pg";
import { offlineActivations, plans } from "../../db/schema-pg";
import { writeEffectsPg } from "../outbox/write.pg";
import { readLicenseAccess } from "../license-api/repo.pg";
import type { OfflineAccess, OfflineActivation, NewOfflineActivation, OfflineTokenRepo, SelfServiceOutcome } from "./repo";

const liveOf = (licenseId: string) => and(eq(offlineActivations.licenseId, licenseId), isNull(offlineActivations.clearedAt));

async function findLive(tx: PgExecutor, licenseId: string): Promise<OfflineActivation | null> {
  const [row] = await tx.select().from(offlineActivations).where(liveOf(licenseId));
  return row ?? null;
}

/**
 * The license and its plan (the public API's read; `forUpdate` locks the license row), with the
 * plan's portal_offline_activation setting, read in the same transaction.
 */
async function readOfflineAccess(tx: PgExecutor, licenseId: string, opts: { forUpdate?: boolean } = {}): Promise<OfflineAccess | null> {
  const access = await readLicenseAccess(tx, { id: licenseId }, opts);
  if (!access) return null;
  const [setting] = await tx.select({ on: plans.portalOfflineActivation }).from(plans).where(eq(plans.id, access.plan.id));
  return { license: access.license, plan: { ...access.plan, portalOfflineActivation: setting?.on ?? false } };
}

/** A license's offline activations, newest first: one range of offline_activations_license_created_idx (exported for the query-plan test). */
export const offlineActivationsOfLicenseQueryPg = (db: PgHandle["db"], licenseId: string) =>
  db
    .select()
    .from(offlineActivations)
    .where(eq(offlineActivations.licenseId, licenseId))
    .orderBy(desc(offlineActivations.createdAt), sql`${offlineActivations.id} COLLATE "C" DESC`);

export function createOfflineTokenRepoPg(handle: PgHandle): OfflineTokenRepo {
  const { db } = handle;
  return {
    async issue(licenseId, decide) {
      return db.transaction(async (tx) => {
        // Locks the license row: a suspend or revoke of the same license serialises with the issue.
        const { result, effects } = decide(await readOfflineAccess(tx, licenseId, { forUpdate: true }));
        await writeEffectsPg(tx, effects);
        return result;
      });
    },
    async activate<T>(licenseId: string, decide: (current: OfflineAccess | null) => NewOfflineActivation<T>) {
      return db.transaction(async (tx): Promise<SelfServiceOutcome<T>> => {
        // The license row lock serialises two self-service requests for the same license (and an
        // admin clear cannot interleave); the partial unique index is the backstop.
        const current = await readOfflineAccess(tx, licenseId, { forUpdate: true });
        const existing = current ? await findLive(tx, licenseId) : null;
        if (existing) return { kind: "taken", existing };
        const { result, effects, activation } = decide(current);
        const row: OfflineActivation = { ...activation, licenseId, clearedAt: null, clearedBy: null };
        await tx.insert(offlineActivations).values(row);
        await writeEffectsPg(tx, effects);
        return { kind: "created", activation: row, result };
      });
    },
    async findAccess(licenseId) {
      return readOfflineAccess(db, licenseId);
    },
    async findLive(licenseId) {
      return findLive(db, licenseId);
    },
    async listByLicense(licenseId) {
      return offlineActivationsOfLicenseQueryPg(db, licenseId);
    },
    async clear(licenseId, activationId, at, clearedBy, effects) {
      return db.transaction(async (tx) => {
        const [cleared] = await tx
          .update(offlineActivations)
          .set({ clearedAt: at, clearedBy })
          .where(and(eq(offlineActivations.id, activationId), liveOf(licenseId)))
          .returning();
        if (!cleared) return null;
        await writeEffectsPg(tx, effects(cleared));
        return cleared;
      });
    },
    async findForVerify(keyHash, identifier) {
      // Verify's miss path: one statement that costs the same whether the key, the license or the
      // activation is missing (spec design rule 4), as on SQLite.
      const [live] = await handle.sql<{ one: number }[]>`
        SELECT 1 AS one FROM offline_activations o JOIN licenses l ON l.id = o.license_id
         WHERE l.key_hash = ${keyHash} AND o.identifier = ${identifier} AND o.cleared_at IS NULL LIMIT 1`;
      return live ? await readLicenseAccess(db, { keyHash }) : null;
    },
  };
}
