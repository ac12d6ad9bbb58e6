import type { PgHandle } from "../../db/pg";
import { writeEffectsPg } from "../outbox/write.pg";
import { readLicenseAccess } from "../license-api/repo.pg";
import type { OfflineTokenRepo } from "./repo";

export function createOfflineTokenRepoPg(handle: PgHandle): OfflineTokenRepo {
  const { db } = handle;
  return {
    async issue(licenseId, decide) {
      return db.transaction(async (tx) => {
        // Locks the license row: a suspend or revoke of the same license serialises with the issue.
        const { result, effects } = decide(await readLicenseAccess(tx, { id: licenseId }, { forUpdate: true }));
        await writeEffectsPg(tx, effects);
        return result;
      });
    },
  };
}
