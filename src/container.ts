// Builds Deps from a config: opens the database, applies migrations, loads keys, wires repositories.
// Used by main.ts, the CLI and the test support; it reads no environment itself.
import { watchClockSkew } from "./db/clock-skew";
import type { Config } from "./config";
import type { Deps, Repos } from "./deps";
import { openDatabase, type DbHandle } from "./db/client";
import type { DataStore, EngineParts, EngineStore } from "./db/store";
import { createSqliteGate } from "./db/transaction.sqlite";
import { createTransactionScope } from "./db/transaction-scope";
import { runMigrations } from "./db/migrate";
import type { Clock } from "./shared/clock";
import type { Logger } from "./shared/logger";
import { loadMasterKey, secretsFromMaster } from "./modules/keys/secrets";
import { createTokenKeyring } from "./modules/keys/service";
import { createSigningKeyRepo } from "./modules/keys/repo.sql";
import { createAuditRepo } from "./modules/audit/repo.sql";
import { createProductRepo } from "./modules/products/repo.sql";
import { createApiKeyRepo } from "./modules/api-keys/repo.sql";
import { createPlanRepo } from "./modules/plans/repo.sql";
import { createLicenseRepo } from "./modules/licenses/repo.sql";
import { licenseListQuery } from "./modules/licenses/list-query.sqlite";
import { createReleaseRepo } from "./modules/releases/repo.sql";
import { createStorage } from "./modules/storage/factory";
import { createAddonRepo } from "./modules/addons/repo.sql";
import { createSettingsRepo } from "./modules/settings/repo.sql";
import { createLicenseAccessRepo } from "./modules/license-api/repo.sqlite";
import { createActivationRepo } from "./modules/activations/repo.sqlite";
import { createEntitlementRepo } from "./modules/entitlements/repo.sqlite";
import { createUsageRepo } from "./modules/usage/repo.sqlite";
import { createFloatingRepo } from "./modules/floating/repo.sqlite";
import { createOfflineTokenRepo } from "./modules/offline/repo.sql";
import { createOfflineVerifyLookup } from "./modules/offline/verify-lookup.sqlite";
import { createIdempotencyRepo } from "./modules/idempotency/repo.sqlite";
import { createBruteForceRepo } from "./modules/abuse/repo.sqlite";
import { createSqliteRateLimiter } from "./modules/abuse/rate-limit.sqlite";
import { createJobLeaseRepo } from "./jobs/lease.sql";
import { createOutboxRepo } from "./modules/outbox/repo.sqlite";
import { createSeatRepo } from "./modules/seats/repo.sql";
import { createUserRepo } from "./modules/users/repo.sql";
import { createSessionRepo } from "./modules/sessions/repo.sql";
import { sqliteQueryDialect } from "./db/dialect/query.sqlite";
import { createSignInCodeRepo } from "./modules/sign-in/repo.sql";
import { createOutboxNudger } from "./modules/outbox/nudge";
import { createEmailHandler } from "./modules/email/handler";
import { maySignIn } from "./modules/sign-in/service";
import { loadEmailRenderContext } from "./modules/email/context";
import { createLifecycleRepo } from "./modules/lifecycle/repo.sqlite";
import { createEmailTemplateRepo } from "./modules/email/repo.sql";
import { createWebhookRepo } from "./modules/webhooks/repo.sql";
import { createWebhookFanOut } from "./modules/webhooks/handler";
import { systemResolver } from "./modules/webhooks/ssrf";
import { createStripeClient } from "./modules/payments/stripe";
import { createPaymentRepo } from "./modules/payments/repo.sql";
import { createMeterQueueRepo } from "./modules/metering/repo.sql";

export function createSqliteRepos(handle: DbHandle): Repos {
  const d = sqliteQueryDialect(handle);
  return {
    signingKeys: createSigningKeyRepo(d),
    audit: createAuditRepo(d),
    products: createProductRepo(d),
    apiKeys: createApiKeyRepo(d),
    plans: createPlanRepo(d),
    licenses: createLicenseRepo(d, (f) => licenseListQuery(handle.db, f)),
    releases: createReleaseRepo(d),
    addons: createAddonRepo(d),
    settings: createSettingsRepo(d),
    licenseAccess: createLicenseAccessRepo(handle),
    activations: createActivationRepo(handle),
    entitlements: createEntitlementRepo(handle),
    usage: createUsageRepo(handle),
    floating: createFloatingRepo(handle),
    offlineTokens: createOfflineTokenRepo(d, createOfflineVerifyLookup(handle)),
    idempotency: createIdempotencyRepo(handle),
    bruteForce: createBruteForceRepo(handle),
    jobLeases: createJobLeaseRepo(d),
    outbox: createOutboxRepo(handle),
    seats: createSeatRepo(d),
    users: createUserRepo(d),
    sessions: createSessionRepo(d),
    signInCodes: createSignInCodeRepo(d),
    lifecycle: createLifecycleRepo(handle),
    emailTemplates: createEmailTemplateRepo(d),
    webhooks: createWebhookRepo(d),
    payments: createPaymentRepo(d),
    meterQueue: createMeterQueueRepo(d),
  };
}

const sqliteHandles = new WeakMap<DataStore | EngineStore, DbHandle>();

/** The SQLite connection behind a store (backup, tests inspecting rows); null on PostgreSQL. */
export function sqliteHandleOf(store: DataStore): DbHandle | null {
  return sqliteHandles.get(store) ?? null;
}

/** Everything but the database: the same on both engines. */
async function assemble(
  config: Readonly<Config>,
  clock: Clock,
  logger: Logger,
  engine: EngineParts,
): Promise<Deps> {
  const secrets = secretsFromMaster(loadMasterKey(config, logger));
  // Deps' repositories refuse inside a transaction's callback, which gets its own (db/transaction-scope.ts).
  const scope = createTransactionScope(engine.store, { clock, config, secrets, logger });
  const repos = scope.guard(engine.repos);
  const tokenKeys = await createTokenKeyring({
    repo: repos.signingKeys,
    transaction: (fn) => scope.transaction(({ repos: r }) => fn(r)),
    secrets,
    clock,
    configuredSeedHex: config.licenseSigningKeyHex,
    onRefreshError: (error) => logger.warn("token key refresh failed", { error }),
  });
  const storage = createStorage({ config, clock, secrets });
  // Several nodes on one database: each node's clock against the server's (db/clock-skew.ts).
  const clockWatch = engine.clockSkew ? watchClockSkew({ measure: () => engine.clockSkew!(clock), logger }) : null;
  const db: DataStore = {
    engine: engine.store.engine,
    ping: () => engine.store.ping(),
    transaction: scope.transaction,
    close: async () => {
      tokenKeys.stop();
      clockWatch?.stop();
      await engine.closeDb();
    },
  };
  const sqlite = sqliteHandles.get(engine.store);
  if (sqlite) sqliteHandles.set(db, sqlite);
  // Inert until the scheduler starts the delivery worker (JOBS on).
  const outboxNudge = createOutboxNudger();
  const deps: Deps = {
    config,
    clock,
    logger,
    db,
    secrets,
    repos,
    tokenKeys,
    storage,
    rateLimiter: engine.rateLimiter,
    outboxHandlers: {
      email: createEmailHandler({
        config,
        secrets,
        logger,
        context: () => loadEmailRenderContext(repos),
        // Decided at delivery, not at the request (its timing must not tell who is known).
        maySignIn: (address) => maySignIn(repos, config, address),
      }),
    },
    outboxNudge,
    resolveHost: systemResolver,
    stripe: config.stripe ? createStripeClient(config.stripe) : null,
  };
  // Reads deps when it runs (tests swap the nudger).
  deps.outboxHandlers.event = createWebhookFanOut(deps);
  return deps;
}

/**
 * The one place that picks the engine: DATABASE_URL (PostgreSQL, several nodes) or the SQLite file
 * (one node, the default). Migrations run here on either engine.
 */
export async function createDeps(config: Readonly<Config>, clock: Clock, logger: Logger): Promise<Deps> {
  if (config.databaseUrl) {
    // Loaded only here: postgres.js brings node:net, node:tls and more, which a node on SQLite never
    // needs; the release build splits it into its own chunk (scripts/build.ts, --splitting), so a
    // SQLite start does not pay for loading it.
    const { openPgEngine } = await import("./repos.pg");
    const engine = await openPgEngine(config.databaseUrl, config.databasePoolSize, clock.nowMs(), {
      timeouts: { lockMs: config.databaseLockTimeoutMs, idleMs: config.databaseIdleInTransactionTimeoutMs },
      stallMs: config.databaseStallTimeoutMs,
    });
    try {
      return await assemble(config, clock, logger, engine);
    } catch (e) {
      await engine.closeDb();
      throw e;
    }
  }
  const db = openDatabase(config.databasePath, { mmapSize: config.sqliteMmapSize, checkpointThread: { logger, idlePriority: config.backgroundPriority === "idle" } });
  try {
    // Creating or upgrading the schema fills SQLite's page cache with pages a serving node may never
    // read again (about 1 MB on a new database, bench/binary.ts): handed back once it is done.
    if (runMigrations(db.sqlite, clock.nowMs()).some((m) => m.appliedNow)) db.sqlite.exec("PRAGMA shrink_memory");
    // Deps' repositories wait while a DataStore.transaction is open (one connection per process).
    const gate = createSqliteGate(db);
    const repos = createSqliteRepos(db);
    const store: EngineStore = {
      engine: "sqlite",
      ping: () => db.ping(),
      close: () => db.close(),
      transaction: (fn, opts) => gate.run(() => fn(repos), opts),
    };
    sqliteHandles.set(store, db);
    return await assemble(config, clock, logger, {
      store,
      repos: gate.gate(repos),
      rateLimiter: createSqliteRateLimiter(db),
      closeDb: () => db.close(),
    });
  } catch (e) {
    await db.close();
    throw e;
  }
}
