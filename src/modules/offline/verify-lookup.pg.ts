// Verify's offline lookup on PostgreSQL (OfflineTokenRepo.findForVerify), kept per engine when the
// rest of the repository was written once (repo.sql.ts): it is verify's miss path, one statement that
// costs the same whether the key, the license or the activation is missing (spec design rule 4;
// test/reliability/oracle.test.ts), as on SQLite (verify-lookup.sqlite.ts); on a hit the license and
// plan come from the license API's own join (license-api/repo.pg.ts readLicenseAccess).
import type { PgHandle } from "../../db/pg";
import { readLicenseAccess } from "../license-api/repo.pg";
import type { OfflineVerifyLookup } from "./repo.sql";

export function createOfflineVerifyLookupPg(handle: PgHandle): OfflineVerifyLookup {
  return async (keyHash, identifier) => {
    const [live] = await handle.sql<{ one: number }[]>`
      SELECT 1 AS one FROM offline_activations o JOIN licenses l ON l.id = o.license_id
       WHERE l.key_hash = ${keyHash} AND o.identifier = ${identifier} AND o.cleared_at IS NULL LIMIT 1`;
    return live ? await readLicenseAccess(handle.db, { keyHash }) : null;
  };
}
