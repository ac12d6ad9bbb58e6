// The PostgreSQL repository set (DATABASE_URL=postgres://…); createSqliteRepos in container.ts is
// its SQLite counterpart. Each factory lives in its module's repo.pg.ts.
import { measureClockSkew } from "./db/clock-skew";
import { assertSupportedServer, openPostgres, type PgHandle, type TransactionTimeouts } from "./db/pg";
import { runPgMigrations } from "./db/migrate.pg";
import type { EngineParts, EngineStore } from "./db/store";
import { withPgTransaction } from "./db/transaction.pg";
import type { Repos } from "./deps";
import { createPgRateLimiter } from "./modules/abuse/rate-limit.pg";
import { createLicenseAccessRepoPg } from "./modules/license-api/repo.pg";
import { createLicenseRepo } from "./modules/licenses/repo.sql";
import { licenseListQueryPg } from "./modules/licenses/list-query.pg";
import { createActivationRepoPg } from "./modules/activations/repo.pg";
import { createEntitlementRepoPg } from "./modules/entitlements/repo.pg";
import { createUsageRepoPg } from "./modules/usage/repo.pg";
import { createFloatingRepoPg } from "./modules/floating/repo.pg";
import { createOfflineTokenRepo } from "./modules/offline/repo.sql";
import { createOfflineVerifyLookupPg } from "./modules/offline/verify-lookup.pg";
import { createReleaseRepo } from "./modules/releases/repo.sql";
import { createIdempotencyRepoPg } from "./modules/idempotency/repo.pg";
import { createBruteForceRepoPg } from "./modules/abuse/repo.pg";
import { createProductRepo } from "./modules/products/repo.sql";
import { createPlanRepo } from "./modules/plans/repo.sql";
import { createAddonRepo } from "./modules/addons/repo.sql";
import { createSettingsRepo } from "./modules/settings/repo.sql";
import { createApiKeyRepo } from "./modules/api-keys/repo.sql";
import { createAuditRepo } from "./modules/audit/repo.sql";
import { createSigningKeyRepo } from "./modules/keys/repo.sql";
import { createJobLeaseRepo } from "./jobs/lease.sql";
import { createOutboxRepoPg } from "./modules/outbox/repo.pg";
import { createSeatRepo } from "./modules/seats/repo.sql";
import { createUserRepo } from "./modules/users/repo.sql";
import { createSessionRepo } from "./modules/sessions/repo.sql";
import { pgQueryDialect } from "./db/dialect/query.pg";
import { createSignInCodeRepo } from "./modules/sign-in/repo.sql";
import { createLifecycleRepoPg } from "./modules/lifecycle/repo.pg";
import { createEmailTemplateRepo } from "./modules/email/repo.sql";
import { createWebhookRepo } from "./modules/webhooks/repo.sql";
import { createPaymentRepo } from "./modules/payments/repo.sql";
import { createMeterQueueRepo } from "./modules/metering/repo.sql";

/** The public rate limiter on PostgreSQL (exact across nodes); openPgEngine wires it as `rateLimiter`. */
export { createPgRateLimiter };

/**
 * The PostgreSQL engine for createDeps (container.ts, which imports this module only when
 * DATABASE_URL is set): the migrations applied, then a pool of `poolSize` connections with the
 * transaction limits and the stall watchdog (`limits`), the repositories, the shared rate limiter.
 */
export async function openPgEngine(
  url: string,
  poolSize: number,
  nowMs: number,
  limits: { timeouts?: TransactionTimeouts; stallMs?: number } = {},
): Promise<EngineParts> {
  // Migrations on a connection of their own, without the pool's limits: a long migration, or a node
  // waiting while another node migrates, hears nothing from the server for as long as that takes.
  const migrator = openPostgres(url, { max: 1 });
  try {
    await assertSupportedServer(migrator.sql);
    await runPgMigrations(migrator.sql, nowMs);
  } finally {
    await migrator.close();
  }
  const pg = openPostgres(url, { max: poolSize, ...limits });
  const store: EngineStore = {
    engine: "postgres",
    ping: () => pg.ping(),
    close: () => pg.close(),
    transaction: (fn, opts) => withPgTransaction(pg, (tx) => fn(createPgRepos(tx)), opts),
  };
  return {
    store,
    repos: createPgRepos(pg),
    rateLimiter: createPgRateLimiter(pg),
    closeDb: () => pg.close(),
    clockSkew: (clock) => measureClockSkew(pg.sql, clock),
  };
}

export function createPgRepos(handle: PgHandle): Repos {
  const d = pgQueryDialect(handle);
  return {
    signingKeys: createSigningKeyRepo(d),
    audit: createAuditRepo(d),
    products: createProductRepo(d),
    apiKeys: createApiKeyRepo(d),
    plans: createPlanRepo(d),
    licenses: createLicenseRepo(d, (f) => licenseListQueryPg(handle.db, f)),
    releases: createReleaseRepo(d),
    addons: createAddonRepo(d),
    settings: createSettingsRepo(d),
    licenseAccess: createLicenseAccessRepoPg(handle),
    activations: createActivationRepoPg(handle),
    entitlements: createEntitlementRepoPg(handle),
    usage: createUsageRepoPg(handle),
    floating: createFloatingRepoPg(handle),
    offlineTokens: createOfflineTokenRepo(d, createOfflineVerifyLookupPg(handle)),
    idempotency: createIdempotencyRepoPg(handle),
    bruteForce: createBruteForceRepoPg(handle),
    jobLeases: createJobLeaseRepo(d),
    outbox: createOutboxRepoPg(handle),
    seats: createSeatRepo(d),
    users: createUserRepo(d),
    sessions: createSessionRepo(d),
    signInCodes: createSignInCodeRepo(d),
    lifecycle: createLifecycleRepoPg(handle),
    emailTemplates: createEmailTemplateRepo(d),
    webhooks: createWebhookRepo(d),
    payments: createPaymentRepo(d),
    meterQueue: createMeterQueueRepo(d),
  };
}
