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
import { createReleaseRepoPg } from "./modules/releases/repo.pg";
import { createIdempotencyRepoPg } from "./modules/idempotency/repo.pg";
import { createBruteForceRepoPg } from "./modules/abuse/repo.pg";

/** The public rate limiter on PostgreSQL (exact across nodes); container.ts wires it as `rateLimiter`. */
export { createPgRateLimiter } from "./modules/abuse/rate-limit.pg";
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
    licenses: createLicenseRepoPg(handle),
    activations: createActivationRepoPg(handle),
    entitlements: createEntitlementRepoPg(handle),
    usage: createUsageRepoPg(handle),
    floating: createFloatingRepoPg(handle),
    releases: createReleaseRepoPg(handle),
    idempotency: createIdempotencyRepoPg(handle),
    bruteForce: createBruteForceRepoPg(handle),
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
