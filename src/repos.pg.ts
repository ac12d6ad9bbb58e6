// The PostgreSQL repository set (DATABASE_URL=postgres://…); createSqliteRepos in container.ts is
// its SQLite counterpart. Each factory lives in its module's repo.pg.ts.
import type { PgHandle } from "./db/pg";
import type { Repos } from "./deps";
import { createLicenseAccessRepoPg } from "./modules/license-api/repo.pg";
// catalog and system repositories (pg-h1)
import { createProductRepoPg } from "./modules/products/repo.pg";
import { createPlanRepoPg } from "./modules/plans/repo.pg";
import { createAddonRepoPg } from "./modules/addons/repo.pg";
import { createSettingsRepoPg } from "./modules/settings/repo.pg";
import { createApiKeyRepoPg } from "./modules/api-keys/repo.pg";
import { createAuditRepoPg } from "./modules/audit/repo.pg";
import { createSigningKeyRepoPg } from "./modules/keys/repo.pg";

export function createPgRepos(handle: PgHandle): Partial<Repos> {
  return {
    licenseAccess: createLicenseAccessRepoPg(handle),
    // catalog and system repositories (pg-h1)
    products: createProductRepoPg(handle),
    plans: createPlanRepoPg(handle),
    addons: createAddonRepoPg(handle),
    settings: createSettingsRepoPg(handle),
    apiKeys: createApiKeyRepoPg(handle),
    audit: createAuditRepoPg(handle),
    signingKeys: createSigningKeyRepoPg(handle),
  };
}
