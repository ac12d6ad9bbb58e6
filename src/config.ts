// The only module that reads the environment (its parts in src/config/ read the record it is given:
// env.ts one variable at a time, integrations.ts Stripe and the sign-in providers). Everything else
// receives a frozen Config.
// A bad value stops the boot with a message naming the variable (ConfigError).
import { resolve } from "node:path";
import type { TrustProxy } from "./http/trusted-proxies";
import { bool, ConfigError, emailList, hex64, int, mailFrom, oneOf, optional, postgresUrl, smtpUrl, str, trustProxy, type Env } from "./config/env";
import { oauthConfig, stripeConfig, type OAuthConfig, type StripeConfig } from "./config/integrations";

export { ConfigError } from "./config/env";
export type { OAuthClientCredentials, OAuthConfig, StripeConfig } from "./config/integrations";

export type StorageDriver = "local" | "s3" | "none";
export type LogLevel = "debug" | "info" | "warn" | "error" | "silent";
/** Deterministic crash points for the crash test (src/shared/fault.ts); NODE_ENV=test only. */
export const CRASH_POINTS = ["after-idempotent-effect"] as const;
export type CrashPoint = (typeof CRASH_POINTS)[number];

/** 2 GiB less 64 KiB: SQLite's build limit (SQLITE_MAX_MMAP_SIZE) for mmap_size; bench/scale.ts, docs/performance.md. */
export const SQLITE_MMAP_SIZE_DEFAULT = 0x7fff0000;

export interface Config {
  nodeEnv: "development" | "production" | "test";
  host: string;
  port: number;
  baseUrl: string;
  dataDir: string;
  databasePath: string;
  /** PostgreSQL connection URL (DATABASE_URL); null: the SQLite file at databasePath. */
  databaseUrl: string | null;
  /** Connections per node in the PostgreSQL pool. */
  databasePoolSize: number;
  /** SQLite: bytes of the database file read through a memory map instead of read() calls (PRAGMA mmap_size); 0: off. */
  sqliteMmapSize: number;
  /**
   * PostgreSQL: how long a transaction waits for a row lock before it fails (503), and how long a
   * transaction may sit idle before the server ends it and frees its locks (a node that stalled or
   * lost its network mid-transaction). Set on every request transaction with SET LOCAL.
   */
  databaseLockTimeoutMs: number;
  databaseIdleInTransactionTimeoutMs: number;
  /**
   * PostgreSQL: how long a connection with a statement outstanding may receive nothing from the
   * server (a network partition, a host gone in a failover) before its statements fail (503) and the
   * pool reconnects; also the limit on opening a connection. 0: off (the kernel gives up after
   * about 15 minutes).
   */
  databaseStallTimeoutMs: number;
  /** 64 hex chars, or null: then a key is generated into DATA_DIR (refused in production). */
  masterKeyHex: string | null;
  /** 64 hex Ed25519 seed for license tokens, or null: generated and stored encrypted. */
  licenseSigningKeyHex: string | null;
  licenseKeyPrefix: string;
  tokenTtlSeconds: number;
  identifierMaxLength: number;
  /** Verify records an activation's last_seen_at at most once per this many seconds (hot path: no write on most verifies). */
  lastSeenIntervalSeconds: number;
  bfMaxFails: number;
  bfLockoutSeconds: number;
  bfWindowSeconds: number;
  /** Whose X-Forwarded-For entries count (src/http/trusted-proxies.ts). */
  trustProxy: TrustProxy;
  logLevel: LogLevel;
  maxBodyBytes: number;
  allowInsecureBaseUrl: boolean;
  /** Requests per minute per client IP on public routes; 0 disables the limit. */
  rateLimitPublicPerMinute: number;
  /** Stripe Checkout sessions per minute per client IP (POST /license/checkout and /license/support/checkout); 0 disables. */
  rateLimitCheckoutPerMinute: number;
  storage: {
    driver: StorageDriver;
    endpoint: string | null;
    bucket: string | null;
    accessKey: string | null;
    secretKey: string | null;
    region: string;
    forcePathStyle: boolean;
    /** Directory of the local driver's objects (STORAGE_LOCAL_DIR, default DATA_DIR/storage). */
    localDir: string;
    downloadUrlTtlSeconds: number;
    uploadUrlTtlSeconds: number;
  };
  shutdownGraceMs: number;
  /** Run the scheduled job passes in `serve` (JOBS, default on; off under NODE_ENV=test unless set). */
  jobs: boolean;
  /**
   * BACKGROUND_PRIORITY: the CPU priority of the node's background threads on SQLite (the lifecycle
   * pass's thread, the checkpoint thread): "idle" (default; Linux SCHED_IDLE, they run on the CPU that
   * requests leave) or "normal".
   */
  backgroundPriority: "idle" | "normal";
  /** Base of the outbox retry backoff (WEBHOOK_RETRY_BASE_SECONDS): the n-th retry waits up to base × 2^(n−1). */
  webhookRetryBaseSeconds: number;
  /** WEBHOOK_CONCURRENCY: webhook requests in flight at once on this node (the delivery worker's pool). */
  webhookConcurrency: number;
  /**
   * WEBHOOK_ENDPOINT_CONCURRENCY: of those, at most this many to one endpoint, so a receiver that never
   * answers holds up only its own deliveries. Below WEBHOOK_CONCURRENCY.
   */
  webhookEndpointConcurrency: number;
  /**
   * HISTORY_RETENTION_DAYS: how long the prune-history pass keeps finished outbox messages, webhook
   * deliveries and metered-billing rows (processed Stripe event ids: at least 30 days whatever this says).
   */
  historyRetentionDays: number;
  /**
   * WEBHOOK_ALLOW_PRIVATE: webhook endpoints may target private, loopback and link-local addresses
   * (and http:// URLs in production). Off by default (SSRF guard, modules/webhooks/ssrf.ts).
   */
  webhookAllowPrivate: boolean;
  /**
   * nodemailer SMTP URL (SMTP_URL: smtp://user:pass@host:587, smtps://…:465), or null: emails are
   * written to the log instead of sent (development). Holds a password: never logged.
   */
  smtpUrl: string | null;
  /** From header of emails (MAIL_FROM): "addr@example.com" or "Name <addr@example.com>"; required with SMTP_URL. */
  mailFrom: string | null;
  /** Test only (refused unless NODE_ENV=test): the process SIGKILLs itself at this point. */
  testCrashPoint: CrashPoint | null;
  /** POST /auth/dev-login signs in any address without proof (DEV_LOGIN; refused in production). */
  devLogin: boolean;
  /** ADMIN_EMAILS, normalized: these addresses are always admins (bootstrap). */
  adminEmails: readonly string[];
  /** Sign-in with GitHub, Google and a generic OpenID Connect provider (docs/sign-in.md). */
  oauth: OAuthConfig;
  /** Stripe payments (docs/payments.md); null when STRIPE_SECRET_KEY is unset: checkouts answer 503. */
  stripe: StripeConfig | null;
}

/**
 * DATABASE_STALL_TIMEOUT_MS: 0 (off) or 1 s to 1 h, and longer than DATABASE_LOCK_TIMEOUT_MS: a
 * statement waiting for a row lock receives nothing from the server until the lock timeout ends it,
 * and must not be taken for a stalled connection before.
 */
function stallTimeout(env: Env, lockMs: number): number {
  const ms = int(env, "DATABASE_STALL_TIMEOUT_MS", 15_000, 0, 3_600_000);
  if (ms === 0) return 0;
  if (ms < 1_000) throw new ConfigError("DATABASE_STALL_TIMEOUT_MS", `must be 0 (off) or at least 1000, got ${ms}`);
  if (ms <= lockMs) {
    throw new ConfigError("DATABASE_STALL_TIMEOUT_MS", `must be longer than DATABASE_LOCK_TIMEOUT_MS (${lockMs}), got ${ms}: a statement waiting for a lock hears nothing until then`);
  }
  return ms;
}

export function loadConfig(env: Env): Readonly<Config> {
  const nodeEnv = oneOf(env, "NODE_ENV", "development", ["development", "production", "test"] as const);
  const host = str(env, "HOST", "127.0.0.1");
  const port = int(env, "PORT", 8080, 0, 65535);
  const lockTimeoutMs = int(env, "DATABASE_LOCK_TIMEOUT_MS", 10_000, 100, 600_000);
  const baseUrlRaw = str(env, "BASE_URL", `http://${host.includes(":") ? `[${host}]` : host}:${port}`);
  let baseUrl: string;
  try {
    const u = new URL(baseUrlRaw);
    if (u.protocol !== "http:" && u.protocol !== "https:") throw new Error("protocol");
    baseUrl = u.toString().replace(/\/+$/, "");
  } catch {
    throw new ConfigError("BASE_URL", `must be an absolute http(s) URL, got "${baseUrlRaw}"`);
  }
  const dataDir = resolve(str(env, "DATA_DIR", "./data"));
  const prefix = str(env, "LICENSE_KEY_PREFIX", "KW").toUpperCase();
  if (!/^[A-Z0-9]{1,8}$/.test(prefix)) {
    throw new ConfigError("LICENSE_KEY_PREFIX", "must be 1-8 letters or digits");
  }
  const driver = oneOf(env, "STORAGE_DRIVER", "local", ["local", "s3", "none"] as const);
  const webhookConcurrency = int(env, "WEBHOOK_CONCURRENCY", 50, 2, 1000);
  const webhookEndpointConcurrency = int(env, "WEBHOOK_ENDPOINT_CONCURRENCY", Math.min(8, webhookConcurrency - 1), 1, 1000);
  // Equal would let one slow endpoint take every slot again (docs/webhooks.md#retries).
  if (webhookEndpointConcurrency >= webhookConcurrency) {
    throw new ConfigError("WEBHOOK_ENDPOINT_CONCURRENCY", `must be below WEBHOOK_CONCURRENCY (${webhookConcurrency}), got ${webhookEndpointConcurrency}`);
  }
  const storage: Config["storage"] = {
    driver,
    endpoint: optional(env, "STORAGE_ENDPOINT"),
    bucket: optional(env, "STORAGE_BUCKET"),
    accessKey: optional(env, "STORAGE_ACCESS_KEY"),
    secretKey: optional(env, "STORAGE_SECRET_KEY"),
    region: str(env, "STORAGE_REGION", "us-east-1"),
    forcePathStyle: bool(env, "STORAGE_FORCE_PATH_STYLE", true),
    localDir: resolve(dataDir, str(env, "STORAGE_LOCAL_DIR", "storage")),
    downloadUrlTtlSeconds: int(env, "DOWNLOAD_URL_TTL_SECONDS", 300, 10, 7 * 24 * 3600),
    uploadUrlTtlSeconds: int(env, "UPLOAD_URL_TTL_SECONDS", 3600, 60, 7 * 24 * 3600),
  };
  if (driver === "s3") {
    for (const [name, value] of [
      ["STORAGE_BUCKET", storage.bucket],
      ["STORAGE_ACCESS_KEY", storage.accessKey],
      ["STORAGE_SECRET_KEY", storage.secretKey],
    ] as const) {
      if (!value) throw new ConfigError(name, "is required when STORAGE_DRIVER=s3");
    }
    if (storage.endpoint !== null) {
      try {
        const u = new URL(storage.endpoint);
        if (u.protocol !== "http:" && u.protocol !== "https:") throw new Error("protocol");
      } catch {
        throw new ConfigError("STORAGE_ENDPOINT", `must be an absolute http(s) URL, got "${storage.endpoint}"`);
      }
    }
  }

  const config: Config = {
    nodeEnv,
    host,
    port,
    baseUrl,
    dataDir,
    databasePath: resolve(dataDir, str(env, "DATABASE_FILE", "keyward.db")),
    databaseUrl: postgresUrl(env, "DATABASE_URL"),
    databasePoolSize: int(env, "DATABASE_POOL_SIZE", 10, 1, 1000),
    sqliteMmapSize: int(env, "SQLITE_MMAP_SIZE", SQLITE_MMAP_SIZE_DEFAULT, 0, 2 ** 40),
    databaseLockTimeoutMs: lockTimeoutMs,
    databaseIdleInTransactionTimeoutMs: int(env, "DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS", 30_000, 1_000, 3_600_000),
    databaseStallTimeoutMs: stallTimeout(env, lockTimeoutMs),
    masterKeyHex: hex64(env, "RELEASE_KEY_ENCRYPTION_KEY"),
    licenseSigningKeyHex: hex64(env, "LICENSE_SIGNING_KEY"),
    licenseKeyPrefix: prefix,
    tokenTtlSeconds: int(env, "TOKEN_TTL", 7 * 24 * 3600, 60, 366 * 24 * 3600),
    identifierMaxLength: int(env, "IDENTIFIER_MAX_LENGTH", 255, 16, 4096),
    lastSeenIntervalSeconds: int(env, "LAST_SEEN_INTERVAL_SECONDS", 900, 0, 7 * 24 * 3600),
    bfMaxFails: int(env, "BF_MAX_FAILS", 5, 1, 1000),
    bfLockoutSeconds: int(env, "BF_LOCKOUT_SECONDS", 30, 1, 3600),
    bfWindowSeconds: int(env, "BF_WINDOW_SECONDS", 300, 1, 86400),
    trustProxy: trustProxy(env, "TRUST_PROXY"),
    logLevel: oneOf(env, "LOG_LEVEL", nodeEnv === "test" ? "silent" : "info", [
      "debug",
      "info",
      "warn",
      "error",
      "silent",
    ] as const),
    maxBodyBytes: int(env, "MAX_BODY_BYTES", 1024 * 1024, 1024, 64 * 1024 * 1024),
    allowInsecureBaseUrl: bool(env, "ALLOW_INSECURE_BASE_URL", false),
    rateLimitPublicPerMinute: int(env, "RATE_LIMIT_PUBLIC_PER_MINUTE", 1200, 0, 100_000_000),
    rateLimitCheckoutPerMinute: int(env, "RATE_LIMIT_CHECKOUT_PER_MINUTE", 20, 0, 100_000),
    storage,
    shutdownGraceMs: int(env, "SHUTDOWN_GRACE_MS", 10_000, 0, 600_000),
    // Tests start servers of their own and drive the passes directly; a scheduler firing in the
    // middle of a test would change its data.
    jobs: bool(env, "JOBS", nodeEnv !== "test"),
    backgroundPriority: oneOf(env, "BACKGROUND_PRIORITY", "idle", ["idle", "normal"] as const),
    webhookRetryBaseSeconds: int(env, "WEBHOOK_RETRY_BASE_SECONDS", 30, 1, 3600),
    webhookConcurrency,
    webhookEndpointConcurrency,
    historyRetentionDays: int(env, "HISTORY_RETENTION_DAYS", 30, 7, 3650),
    webhookAllowPrivate: bool(env, "WEBHOOK_ALLOW_PRIVATE", false),
    smtpUrl: smtpUrl(env, "SMTP_URL"),
    mailFrom: mailFrom(env, "MAIL_FROM"),
    testCrashPoint: optional(env, "TEST_CRASH_POINT") === null ? null : oneOf(env, "TEST_CRASH_POINT", CRASH_POINTS[0], CRASH_POINTS),
    devLogin: bool(env, "DEV_LOGIN", false),
    adminEmails: emailList(env, "ADMIN_EMAILS"),
    oauth: oauthConfig(env, nodeEnv === "production"),
    stripe: stripeConfig(env, nodeEnv === "production"),
  };
  if (config.smtpUrl !== null && config.mailFrom === null) {
    throw new ConfigError("MAIL_FROM", "is required when SMTP_URL is set");
  }
  if (config.testCrashPoint !== null && nodeEnv !== "test") {
    // A crash switch must never reach a real deployment.
    throw new ConfigError("TEST_CRASH_POINT", "is a test-only setting and is refused unless NODE_ENV=test");
  }

  if (nodeEnv === "production") {
    // Production refuses the conveniences that make a first local start work (DECISIONS: Service basics).
    if (!config.masterKeyHex) {
      throw new ConfigError("RELEASE_KEY_ENCRYPTION_KEY", "is required when NODE_ENV=production");
    }
    if (config.devLogin) {
      // Dev login signs anyone in as anyone: never on a production service.
      throw new ConfigError("DEV_LOGIN", "is refused when NODE_ENV=production");
    }
    if (config.baseUrl.startsWith("http://") && !config.allowInsecureBaseUrl) {
      throw new ConfigError("BASE_URL", "must use https in production (or set ALLOW_INSECURE_BASE_URL=true)");
    }
  }
  return Object.freeze({ ...config, storage: Object.freeze(storage), oauth: Object.freeze(config.oauth) });
}

/** Reads process.env; only boot code (main, cli) calls this. */
export function configFromProcessEnv(overrides: Env = {}): Readonly<Config> {
  return loadConfig({ ...process.env, ...overrides });
}
