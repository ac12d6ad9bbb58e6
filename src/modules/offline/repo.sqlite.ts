import { immediate, type DbHandle } from "../../db/client";
import { writeEffects } from "../outbox/write.sqlite";
import { createLicenseAccessReaders } from "../license-api/repo.sqlite";
import type { OfflineTokenRepo } from "./repo";

export function createOfflineTokenRepo(handle: DbHandle): OfflineTokenRepo {
  const access = createLicenseAccessReaders(handle);
  return {
    async issue(licenseId, decide) {
      return immediate(handle, () => {
        const { result, effects } = decide(access.findById(licenseId));
        writeEffects(handle.db, effects);
        return result;
      });
    },
  };
}
