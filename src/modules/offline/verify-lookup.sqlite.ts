// Verify's offline lookup on SQLite (OfflineTokenRepo.findForVerify), kept per engine when the rest
// of the repository was written once (repo.sql.ts): it is verify's miss path for every failure class
// with a well-formed key, so it must cost the same whether the key, the license or the activation is
// missing (spec design rule 4; test/reliability/oracle.test.ts), and it stays the one raw prepared
// statement it was, answered synchronously, with the license API's own prepared readers
// (license-api/repo.sqlite.ts createLicenseAccessReaders) for the license on a hit.
import type { DbHandle } from "../../db/client";
import { lazyStatement } from "../../db/client";
import { createLicenseAccessReaders } from "../license-api/repo.sqlite";
import type { OfflineVerifyLookup } from "./repo.sql";

export function createOfflineVerifyLookup(handle: DbHandle): OfflineVerifyLookup {
  const readers = createLicenseAccessReaders(handle);
  const liveForVerify = lazyStatement(() =>
    handle.sqlite.prepare<{ one: number }, [string, string]>(
      `SELECT 1 AS one FROM offline_activations o JOIN licenses l ON l.id = o.license_id
        WHERE l.key_hash = ? AND o.identifier = ? AND o.cleared_at IS NULL LIMIT 1`,
    ),
  );
  return async (keyHash, identifier) => {
    if (!liveForVerify().get(keyHash, identifier)) return null;
    return readers.findByKeyHash(keyHash);
  };
}
