// Everything a verb may need, built once at boot (main.ts / test support) and passed explicitly.
import type { Config } from "./config";
import type { Clock } from "./shared/clock";
import type { Logger } from "./shared/logger";
import type { DataStore } from "./db/store";
import type { Secrets } from "./modules/keys/secrets";
import type { RateLimiter } from "./shared/rate-limiter";
import type { TokenKeyring } from "./modules/keys/service";
import type { SigningKeyRepo } from "./modules/keys/repo";
import type { AuditRepo } from "./modules/audit/repo";
import type { ProductRepo } from "./modules/products/repo";
import type { ApiKeyRepo } from "./modules/api-keys/repo";
import type { PlanRepo } from "./modules/plans/repo";
import type { LicenseRepo } from "./modules/licenses/repo";
import type { ReleaseRepo } from "./modules/releases/repo";
import type { Storage } from "./modules/storage/storage";
import type { AddonRepo } from "./modules/addons/repo";
import type { SettingsRepo } from "./modules/settings/repo";
import type { LicenseAccessRepo } from "./modules/license-api/repo";
import type { ActivationRepo } from "./modules/activations/repo";
import type { EntitlementRepo } from "./modules/entitlements/repo";
import type { UsageRepo } from "./modules/usage/repo";
import type { FloatingRepo } from "./modules/floating/repo";
import type { OfflineTokenRepo } from "./modules/offline/repo";
import type { IdempotencyRepo } from "./modules/idempotency/repo";
import type { BruteForceRepo } from "./modules/abuse/repo";
import type { JobLeaseRepo } from "./jobs/lease";
import type { OutboxRepo } from "./modules/outbox/repo";
import type { OutboxHandlers } from "./modules/outbox/handlers";
import type { SeatRepo } from "./modules/seats/repo";
import type { UserRepo } from "./modules/users/repo";
import type { SessionRepo } from "./modules/sessions/repo";
import type { SignInCodeRepo } from "./modules/sign-in/repo";
import type { OutboxNudger } from "./modules/outbox/nudge";
import type { LifecycleRepo } from "./modules/lifecycle/repo";
import type { EmailTemplateRepo } from "./modules/email/repo";
import type { WebhookRepo } from "./modules/webhooks/repo";
import type { HostResolver } from "./modules/webhooks/ssrf";
import type { StripeClient } from "./modules/payments/stripe";
import type { PaymentRepo } from "./modules/payments/repo";
import type { PassThreads } from "./jobs/pass-thread";
import type { MeterQueueRepo } from "./modules/metering/repo";

/** Repository interfaces: every method returns a promise; one implementation set per engine. */
export interface Repos {
  signingKeys: SigningKeyRepo;
  audit: AuditRepo;
  products: ProductRepo;
  apiKeys: ApiKeyRepo;
  plans: PlanRepo;
  licenses: LicenseRepo;
  releases: ReleaseRepo;
  addons: AddonRepo;
  settings: SettingsRepo;
  licenseAccess: LicenseAccessRepo;
  activations: ActivationRepo;
  entitlements: EntitlementRepo;
  usage: UsageRepo;
  floating: FloatingRepo;
  offlineTokens: OfflineTokenRepo;
  idempotency: IdempotencyRepo;
  bruteForce: BruteForceRepo;
  jobLeases: JobLeaseRepo;
  outbox: OutboxRepo;
  seats: SeatRepo;
  users: UserRepo;
  sessions: SessionRepo;
  signInCodes: SignInCodeRepo;
  lifecycle: LifecycleRepo;
  emailTemplates: EmailTemplateRepo;
  webhooks: WebhookRepo;
  payments: PaymentRepo;
  meterQueue: MeterQueueRepo;
}

export interface Deps {
  config: Readonly<Config>;
  clock: Clock;
  logger: Logger;
  /** transaction(fn): `fn` gets a Tx (db/store.ts), the only repositories to use inside it. */
  db: DataStore;
  secrets: Secrets;
  /** Outside transactions only: called inside a transaction's callback they refuse (db/transaction-scope.ts). */
  repos: Repos;
  tokenKeys: TokenKeyring;
  rateLimiter: RateLimiter;
  storage: Storage;
  /**
   * Delivery of outbox messages, one handler per kind (the deliver-outbox job): email (SMTP, or the log
   * without SMTP_URL); event (fans out into webhook deliveries, modules/webhooks/handler.ts).
   */
  outboxHandlers: OutboxHandlers;
  /**
   * `nudge()` wakes this node's delivery worker after a change that made something deliverable
   * without writing it (enabling an endpoint); writes of outbox messages and webhook deliveries wake
   * it by themselves. Acts only while the worker runs (JOBS on); otherwise a no-op (modules/outbox/nudge.ts).
   */
  outboxNudge: OutboxNudger;
  /**
   * Resolves a webhook endpoint's host name to all its addresses (node:dns lookup); each is checked
   * against the SSRF rule before a delivery connects (modules/webhooks/ssrf.ts). Tests replace it.
   */
  resolveHost: HostResolver;
  /** The Stripe SDK client (STRIPE_SECRET_KEY); null when payments are not configured (docs/payments.md). */
  stripe: StripeClient | null;
  /**
   * Where a serving node runs its long passes: the lifecycle pass on a thread of its own
   * (jobs/pass-thread.ts, set by `serve`). Absent (tests, one-shot commands): on the calling thread.
   */
  passThreads?: PassThreads;
}
