// Builds Deps from a config: opens the database, applies migrations, loads keys, wires repositories.
// Used by main.ts, the CLI and the test support; it reads no environment itself.
import type { Config } from "./config";
import type { Deps, Repos } from "./deps";
import { openDatabase, type DbHandle } from "./db/client";
import type { DataStore } from "./db/store";
import { runMigrations } from "./db/migrate";
import type { Clock } from "./shared/clock";
import type { Logger } from "./shared/logger";
import { loadMasterKey, secretsFromMaster } from "./modules/keys/secrets";
import { createTokenKeyring } from "./modules/keys/service";
import { createSigningKeyRepo } from "./modules/keys/repo.sqlite";
import { createAuditRepo } from "./modules/audit/repo.sqlite";
import { createProductRepo } from "./modules/products/repo.sqlite";
import { createApiKeyRepo } from "./modules/api-keys/repo.sqlite";
import { createPlanRepo } from "./modules/plans/repo.sqlite";
import { createLicenseRepo } from "./modules/licenses/repo.sqlite";
import { createReleaseRepo } from "./modules/releases/repo.sqlite";
import { createStorage } from "./modules/storage/factory";
import { createAddonRepo } from "./modules/addons/repo.sqlite";
import { createSettingsRepo } from "./modules/settings/repo.sqlite";
import { createLicenseAccessRepo } from "./modules/license-api/repo.sqlite";
import { createActivationRepo } from "./modules/activations/repo.sqlite";
import { createEntitlementRepo } from "./modules/entitlements/repo.sqlite";
import { createUsageRepo } from "./modules/usage/repo.sqlite";
import { createFloatingRepo } from "./modules/floating/repo.sqlite";
import { createIdempotencyRepo } from "./modules/idempotency/repo.sqlite";
import { createBruteForceRepo } from "./modules/abuse/repo.sqlite";
import { createSqliteRateLimiter } from "./modules/abuse/rate-limit.sqlite";
import { createJobLeaseRepo } from "./jobs/lease.sqlite";
import { createOutboxRepo } from "./modules/outbox/repo.sqlite";

export function createSqliteRepos(handle: DbHandle): Repos {
  return {
    signingKeys: createSigningKeyRepo(handle),
    audit: createAuditRepo(handle),
    products: createProductRepo(handle),
    apiKeys: createApiKeyRepo(handle),
    plans: createPlanRepo(handle),
    licenses: createLicenseRepo(handle),
    releases: createReleaseRepo(handle),
    addons: createAddonRepo(handle),
    settings: createSettingsRepo(handle),
    licenseAccess: createLicenseAccessRepo(handle),
    activations: createActivationRepo(handle),
    entitlements: createEntitlementRepo(handle),
    usage: createUsageRepo(handle),
    floating: createFloatingRepo(handle),
    idempotency: createIdempotencyRepo(handle),
    bruteForce: createBruteForceRepo(handle),
    jobLeases: createJobLeaseRepo(handle),
    outbox: createOutboxRepo(handle),
  };
}

const sqliteHandles = new WeakMap<DataStore, DbHandle>();

/** The SQLite connection behind a store (backup, tests inspecting rows); null on PostgreSQL. */
export function sqliteHandleOf(store: DataStore): DbHandle | null {
  return sqliteHandles.get(store) ?? null;
}

export async function createDeps(config: Readonly<Config>, clock: Clock, logger: Logger): Promise<Deps> {
  const db = openDatabase(config.databasePath);
  try {
    runMigrations(db.sqlite, clock.nowMs());
    const secrets = secretsFromMaster(loadMasterKey(config, logger));
    const repos = createSqliteRepos(db);
    const tokenKeys = await createTokenKeyring({
      repo: repos.signingKeys,
      secrets,
      clock,
      configuredSeedHex: config.licenseSigningKeyHex,
      onRefreshError: (error) => logger.warn("token key refresh failed", { error }),
    });
    const storage = createStorage({ config, clock, secrets });
    const store: DataStore = {
      engine: db.engine,
      ping: () => db.ping(),
      close: async () => {
        tokenKeys.stop();
        await db.close();
      },
    };
    sqliteHandles.set(store, db);
    return { config, clock, logger, db: store, secrets, repos, tokenKeys, storage, rateLimiter: createSqliteRateLimiter(db), outboxHandlers: {} };
  } catch (e) {
    await db.close();
    throw e;
  }
}
