// The PostgreSQL repository set (DATABASE_URL=postgres://…); createSqliteRepos in container.ts is
// its SQLite counterpart. Each factory lives in its module's repo.pg.ts.
import type { PgHandle } from "./db/pg";
import type { Repos } from "./deps";
import { createLicenseAccessRepoPg } from "./modules/license-api/repo.pg";
// pg-h2: licenses, activations, entitlements, usage, floating
import { createLicenseRepoPg } from "./modules/licenses/repo.pg";
import { createActivationRepoPg } from "./modules/activations/repo.pg";
import { createEntitlementRepoPg } from "./modules/entitlements/repo.pg";
import { createUsageRepoPg } from "./modules/usage/repo.pg";
import { createFloatingRepoPg } from "./modules/floating/repo.pg";

export function createPgRepos(handle: PgHandle): Partial<Repos> {
  return {
    licenseAccess: createLicenseAccessRepoPg(handle),
    licenses: createLicenseRepoPg(handle),
    activations: createActivationRepoPg(handle),
    entitlements: createEntitlementRepoPg(handle),
    usage: createUsageRepoPg(handle),
    floating: createFloatingRepoPg(handle),
  };
}
