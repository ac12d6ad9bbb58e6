import { describe, expect, test } from "bun:test";
import { resolve } from "node:path";
import { ConfigError, loadConfig } from "./config";

const HEX = "ab".repeat(32);

function errorOf(env: Record<string, string>): ConfigError {
  try {
    loadConfig(env);
  } catch (e) {
    if (e instanceof ConfigError) return e;
    throw e;
  }
  throw new Error(`expected a ConfigError for ${JSON.stringify(env)}`);
}

describe("defaults (DECISIONS: Service basics)", () => {
  test("an empty environment gives a working local configuration", () => {
    const c = loadConfig({});
    expect(c.nodeEnv).toBe("development");
    expect(c.host).toBe("127.0.0.1");
    expect(c.port).toBe(8080);
    expect(c.baseUrl).toBe("http://127.0.0.1:8080");
    expect(c.dataDir).toBe(resolve("./data"));
    expect(c.databasePath).toBe(resolve("./data/keyward.db"));
    expect(c.masterKeyHex).toBeNull();
    expect(c.licenseSigningKeyHex).toBeNull();
    expect(c.licenseKeyPrefix).toBe("KW");
    expect(c.tokenTtlSeconds).toBe(7 * 24 * 3600);
    expect(c.bfMaxFails).toBe(5);
    expect(c.bfLockoutSeconds).toBe(30);
    expect(c.trustProxy).toEqual({ mode: "off" });
    expect(c.logLevel).toBe("info");
    expect(c.storage.driver).toBe("local");
    expect(c.shutdownGraceMs).toBe(10_000);
    expect(c.jobs).toBe(true);
    expect(c.webhookRetryBaseSeconds).toBe(30);
    expect(c.historyRetentionDays).toBe(30);
  });

  test("the result is frozen", () => {
    const c = loadConfig({});
    expect(Object.isFrozen(c)).toBe(true);
    expect(Object.isFrozen(c.storage)).toBe(true);
  });

  test("empty strings count as unset (a copied .env.example with blank values works)", () => {
    expect(loadConfig({ PORT: "", BASE_URL: "  ", RELEASE_KEY_ENCRYPTION_KEY: "" })).toEqual(loadConfig({}));
  });

  test("BASE_URL follows HOST and PORT unless given; IPv6 hosts are bracketed; a trailing slash is dropped", () => {
    expect(loadConfig({ HOST: "0.0.0.0", PORT: "9000" }).baseUrl).toBe("http://0.0.0.0:9000");
    expect(loadConfig({ HOST: "::1", PORT: "9000" }).baseUrl).toBe("http://[::1]:9000");
    expect(loadConfig({ BASE_URL: "https://licenses.example.com/" }).baseUrl).toBe("https://licenses.example.com");
  });

  test("DATABASE_FILE is relative to DATA_DIR; hex keys are lower-cased; the prefix upper-cased", () => {
    const c = loadConfig({ DATA_DIR: "/srv/kw", DATABASE_FILE: "main.sqlite", RELEASE_KEY_ENCRYPTION_KEY: HEX.toUpperCase(), LICENSE_KEY_PREFIX: "acme" });
    expect(c.databasePath).toBe("/srv/kw/main.sqlite");
    expect(c.masterKeyHex).toBe(HEX);
    expect(c.licenseKeyPrefix).toBe("ACME");
  });

  test("booleans accept true/false, 1/0, yes/no, on/off", () => {
    for (const v of ["true", "1", "yes", "on", "TRUE"]) expect(loadConfig({ ALLOW_INSECURE_BASE_URL: v }).allowInsecureBaseUrl).toBe(true);
    for (const v of ["false", "0", "no", "off"]) expect(loadConfig({ ALLOW_INSECURE_BASE_URL: v }).allowInsecureBaseUrl).toBe(false);
  });

  test("TRUST_PROXY: off, true (= 1 hop), a hop count, or proxy CIDRs; frozen", () => {
    for (const v of ["false", "0", "no", "off"]) expect(loadConfig({ TRUST_PROXY: v }).trustProxy).toEqual({ mode: "off" });
    for (const v of ["true", "1", "yes", "on", "TRUE"]) expect(loadConfig({ TRUST_PROXY: v }).trustProxy).toEqual({ mode: "hops", hops: 1 });
    expect(loadConfig({ TRUST_PROXY: "2" }).trustProxy).toEqual({ mode: "hops", hops: 2 });
    const c = loadConfig({ TRUST_PROXY: "10.0.0.0/8, fd00::/8" });
    expect(c.trustProxy).toEqual({ mode: "cidrs", cidrs: ["10.0.0.0/8", "fd00::/8"] });
    expect(Object.isFrozen(c.trustProxy)).toBe(true);
  });

  test("TEST_CRASH_POINT is accepted only with NODE_ENV=test", () => {
    expect(loadConfig({}).testCrashPoint).toBeNull();
    expect(loadConfig({ NODE_ENV: "test", TEST_CRASH_POINT: "after-idempotent-effect" }).testCrashPoint).toBe("after-idempotent-effect");
    expect(errorOf({ NODE_ENV: "test", TEST_CRASH_POINT: "boom" }).variable).toBe("TEST_CRASH_POINT");
  });

  test("NODE_ENV=test defaults to silent logs", () => {
    expect(loadConfig({ NODE_ENV: "test" }).logLevel).toBe("silent");
  });

  test("JOBS: on by default, off under NODE_ENV=test unless set", () => {
    expect(loadConfig({ NODE_ENV: "production", RELEASE_KEY_ENCRYPTION_KEY: "ab".repeat(32), BASE_URL: "https://k.example.com" }).jobs).toBe(true);
    expect(loadConfig({ NODE_ENV: "test" }).jobs).toBe(false);
    expect(loadConfig({ NODE_ENV: "test", JOBS: "on" }).jobs).toBe(true);
    expect(loadConfig({ JOBS: "off" }).jobs).toBe(false);
  });

  test("BACKGROUND_PRIORITY: idle by default, or normal; anything else is refused", () => {
    expect(loadConfig({}).backgroundPriority).toBe("idle");
    expect(loadConfig({ BACKGROUND_PRIORITY: "normal" }).backgroundPriority).toBe("normal");
    expect(() => loadConfig({ BACKGROUND_PRIORITY: "high" })).toThrow("BACKGROUND_PRIORITY");
  });
});

describe("a bad value is refused with an error naming the variable", () => {
  const bad: [string, string][] = [
    ["NODE_ENV", "staging"],
    ["PORT", "abc"],
    ["PORT", "-1"],
    ["JOBS", "sometimes"],
    ["WEBHOOK_RETRY_BASE_SECONDS", "0"],
    ["WEBHOOK_RETRY_BASE_SECONDS", "3601"],
    ["HISTORY_RETENTION_DAYS", "6"],
    ["HISTORY_RETENTION_DAYS", "3651"],
    ["HISTORY_RETENTION_DAYS", "30.5"],
    ["PORT", "65536"],
    ["PORT", "80.5"],
    ["BASE_URL", "not a url"],
    ["BASE_URL", "ftp://example.com"],
    ["LICENSE_KEY_PREFIX", "TOO-LONG-PREFIX"],
    ["RELEASE_KEY_ENCRYPTION_KEY", "abc"],
    ["RELEASE_KEY_ENCRYPTION_KEY", "zz".repeat(32)],
    ["LICENSE_SIGNING_KEY", "ab".repeat(31)],
    ["TOKEN_TTL", "10"],
    ["IDENTIFIER_MAX_LENGTH", "5"],
    ["BF_MAX_FAILS", "-1"],
    ["BF_MAX_FAILS", "0"],
    ["BF_LOCKOUT_SECONDS", "0"],
    ["BF_WINDOW_SECONDS", "x"],
    ["TEST_CRASH_POINT", "after-idempotent-effect"], // test only: refused outside NODE_ENV=test
    ["TEST_CRASH_POINT", "boom"],
    ["TRUST_PROXY", "maybe"],
    ["TRUST_PROXY", "33"],
    ["TRUST_PROXY", "10.0.0.0/8, proxy.internal"],
    ["TRUST_PROXY", "10.0.0.0/40"],
    ["LOG_LEVEL", "verbose"],
    ["MAX_BODY_BYTES", "10"],
    ["ALLOW_INSECURE_BASE_URL", "2"],
    ["RATE_LIMIT_PUBLIC_PER_MINUTE", "-1"],
    ["STORAGE_DRIVER", "ftp"],
    ["STORAGE_FORCE_PATH_STYLE", "nah"],
    ["DOWNLOAD_URL_TTL_SECONDS", "1"],
    ["UPLOAD_URL_TTL_SECONDS", "1"],
    ["SHUTDOWN_GRACE_MS", "-5"],
  ];
  for (const [variable, value] of bad) {
    test(`${variable}=${value}`, () => {
      const e = errorOf({ [variable]: value });
      expect(e.variable).toBe(variable);
      expect(e.message).toStartWith(`Invalid configuration: ${variable} `);
    });
  }

  test("STORAGE_DRIVER=s3 requires bucket and credentials, each by name", () => {
    expect(errorOf({ STORAGE_DRIVER: "s3" }).variable).toBe("STORAGE_BUCKET");
    expect(errorOf({ STORAGE_DRIVER: "s3", STORAGE_BUCKET: "b" }).variable).toBe("STORAGE_ACCESS_KEY");
    expect(errorOf({ STORAGE_DRIVER: "s3", STORAGE_BUCKET: "b", STORAGE_ACCESS_KEY: "a" }).variable).toBe("STORAGE_SECRET_KEY");
    expect(loadConfig({ STORAGE_DRIVER: "s3", STORAGE_BUCKET: "b", STORAGE_ACCESS_KEY: "a", STORAGE_SECRET_KEY: "s" }).storage.driver).toBe("s3");
  });
});

describe("NODE_ENV=production refuses unsafe defaults", () => {
  const prod = { NODE_ENV: "production", RELEASE_KEY_ENCRYPTION_KEY: HEX, BASE_URL: "https://licenses.example.com" };

  test("a complete production configuration loads", () => {
    const c = loadConfig(prod);
    expect(c.logLevel).toBe("info");
  });

  test("no generated master key", () => {
    const { RELEASE_KEY_ENCRYPTION_KEY: _, ...env } = prod;
    expect(errorOf(env).variable).toBe("RELEASE_KEY_ENCRYPTION_KEY");
  });

  test("no http BASE_URL without the explicit override", () => {
    expect(errorOf({ ...prod, BASE_URL: "http://licenses.example.com" }).variable).toBe("BASE_URL");
    expect(loadConfig({ ...prod, BASE_URL: "http://10.0.0.5:8080", ALLOW_INSECURE_BASE_URL: "true" }).baseUrl).toBe("http://10.0.0.5:8080");
  });
});

describe("DATABASE_URL selects PostgreSQL", () => {
  const base = { DATA_DIR: "/tmp/keyward-config-test" };
  test("unset or empty: the SQLite file", () => {
    expect(loadConfig(base).databaseUrl).toBeNull();
    expect(loadConfig({ ...base, DATABASE_URL: " " }).databaseUrl).toBeNull();
  });
  test("postgres:// and postgresql:// URLs are taken as given", () => {
    expect(loadConfig({ ...base, DATABASE_URL: "postgres://u:p@db.internal:5432/keyward" }).databaseUrl).toBe("postgres://u:p@db.internal:5432/keyward");
    expect(loadConfig({ ...base, DATABASE_URL: "postgresql://db/keyward" }).databaseUrl).toBe("postgresql://db/keyward");
    expect(loadConfig({ ...base, DATABASE_POOL_SIZE: "25" }).databasePoolSize).toBe(25);
  });
  test("SQLITE_MMAP_SIZE: SQLite's 2 GiB limit by default, 0 turns it off", () => {
    expect(loadConfig(base).sqliteMmapSize).toBe(0x7fff0000);
    expect(loadConfig({ ...base, SQLITE_MMAP_SIZE: "0" }).sqliteMmapSize).toBe(0);
    expect(errorOf({ ...base, SQLITE_MMAP_SIZE: "-1" }).message).toContain("SQLITE_MMAP_SIZE");
  });
  test("anything else is refused naming the variable, without echoing the value (it holds a password)", () => {
    for (const value of ["mysql://u:s3cret@db/keyward", "postgres://", "s3cret", "file:///tmp/x.db"]) {
      const e = errorOf({ ...base, DATABASE_URL: value });
      expect(e.variable).toBe("DATABASE_URL");
      expect(e.message).not.toContain("s3cret");
    }
    expect(errorOf({ ...base, DATABASE_POOL_SIZE: "0" }).variable).toBe("DATABASE_POOL_SIZE");
  });
  test("transaction limits: 10 s lock wait and 30 s idle by default, bounded", () => {
    expect(loadConfig(base)).toMatchObject({ databaseLockTimeoutMs: 10_000, databaseIdleInTransactionTimeoutMs: 30_000 });
    expect(loadConfig({ ...base, DATABASE_LOCK_TIMEOUT_MS: "2500", DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS: "60000" })).toMatchObject({
      databaseLockTimeoutMs: 2_500,
      databaseIdleInTransactionTimeoutMs: 60_000,
    });
    expect(errorOf({ ...base, DATABASE_LOCK_TIMEOUT_MS: "0" }).variable).toBe("DATABASE_LOCK_TIMEOUT_MS");
    expect(errorOf({ ...base, DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS: "500" }).variable).toBe("DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS");
  });
  test("stall limit: 15 s by default, 0 turns it off, and it must outlast the lock timeout", () => {
    expect(loadConfig(base).databaseStallTimeoutMs).toBe(15_000);
    expect(loadConfig({ ...base, DATABASE_STALL_TIMEOUT_MS: "0" }).databaseStallTimeoutMs).toBe(0);
    expect(loadConfig({ ...base, DATABASE_LOCK_TIMEOUT_MS: "1000", DATABASE_STALL_TIMEOUT_MS: "1500" }).databaseStallTimeoutMs).toBe(1_500);
    for (const [lock, stall] of [
      ["10000", "10000"],
      ["10000", "5000"],
      ["100", "500"],
      ["10000", "-1"],
    ] as const) {
      const e = errorOf({ ...base, DATABASE_LOCK_TIMEOUT_MS: lock, DATABASE_STALL_TIMEOUT_MS: stall });
      expect(e.variable).toBe("DATABASE_STALL_TIMEOUT_MS");
    }
  });
  test("a host list (postgres.js's failover form) is taken; a malformed list or an unknown target_session_attrs is refused", () => {
    for (const value of [
      "postgres://u:p@db1:5432,db2:5433/keyward?target_session_attrs=read-write",
      "postgresql://db1,db2,[::1]:6432/keyward",
      "postgres://u:p%40ss@db1,db2/keyward?sslmode=require&target_session_attrs=primary",
    ]) {
      expect(loadConfig({ ...base, DATABASE_URL: value }).databaseUrl).toBe(value);
    }
    for (const value of [
      "postgres://u:s3cret@db1:5432,/keyward",
      "postgres://u:s3cret@db1:99999,db2/keyward",
      "postgres://u:s3cret@db1:54x2,db2/keyward",
      "postgres://u:s3cret@db1,db2/keyward?target_session_attrs=any",
      "postgres://u:s3c@ret@db1,db2/keyward",
    ]) {
      const e = errorOf({ ...base, DATABASE_URL: value });
      expect(e.variable).toBe("DATABASE_URL");
      expect(e.message).not.toContain("s3c");
    }
  });
});

describe("SMTP_URL and MAIL_FROM (email)", () => {
  const base = { DATA_DIR: "/tmp/keyward-config-test" };
  test("unset: no SMTP (emails are logged), no From", () => {
    expect(loadConfig(base)).toMatchObject({ smtpUrl: null, mailFrom: null });
    expect(loadConfig({ ...base, SMTP_URL: " ", MAIL_FROM: "" })).toMatchObject({ smtpUrl: null, mailFrom: null });
  });
  test("smtp:// and smtps:// URLs with a host are taken as given, with a From", () => {
    const from = "Acme Licensing <noreply@acme.example>";
    expect(loadConfig({ ...base, SMTP_URL: "smtp://u:p%40ss@mail.acme.example:587", MAIL_FROM: from })).toMatchObject({
      smtpUrl: "smtp://u:p%40ss@mail.acme.example:587",
      mailFrom: from,
    });
    expect(loadConfig({ ...base, SMTP_URL: "smtps://mail.acme.example", MAIL_FROM: "noreply@acme.example" }).smtpUrl).toBe("smtps://mail.acme.example");
    // MAIL_FROM alone is fine (nothing is sent, it is simply not used yet).
    expect(loadConfig({ ...base, MAIL_FROM: "noreply@acme.example" }).mailFrom).toBe("noreply@acme.example");
  });
  test("anything else is refused naming the variable, without echoing the value (it holds a password)", () => {
    for (const value of ["http://u:s3cret@mail.example.com", "smtp://", "s3cret", "smtp:/u:s3cret@"]) {
      const e = errorOf({ ...base, SMTP_URL: value, MAIL_FROM: "a@example.com" });
      expect(e.variable).toBe("SMTP_URL");
      expect(e.message).not.toContain("s3cret");
    }
  });
  test("MAIL_FROM is required with SMTP_URL and must be one address, with no line breaks", () => {
    expect(errorOf({ ...base, SMTP_URL: "smtp://mail.example.com" }).variable).toBe("MAIL_FROM");
    for (const value of ["not an address", "a@b", "Name <a@example.com>\r\nBcc: x@example.com", "<a@example.com>", "a@example.com, b@example.com"]) {
      expect(errorOf({ ...base, SMTP_URL: "smtp://mail.example.com", MAIL_FROM: value }).variable).toBe("MAIL_FROM");
    }
  });
});

describe("DEV_LOGIN and ADMIN_EMAILS (sign-in)", () => {
  test("DEV_LOGIN is off by default, on when set, and refused with NODE_ENV=production", () => {
    expect(loadConfig({}).devLogin).toBe(false);
    expect(loadConfig({ DEV_LOGIN: "true" }).devLogin).toBe(true);
    const prod = { NODE_ENV: "production", RELEASE_KEY_ENCRYPTION_KEY: "ab".repeat(32), BASE_URL: "https://lic.example.com" };
    expect(loadConfig(prod).devLogin).toBe(false);
    expect(() => loadConfig({ ...prod, DEV_LOGIN: "true" })).toThrow(/DEV_LOGIN/);
  });

  test("ADMIN_EMAILS is a trimmed, lower-cased, de-duplicated list; junk is refused", () => {
    expect(loadConfig({}).adminEmails).toEqual([]);
    expect(loadConfig({ ADMIN_EMAILS: " Ann@Example.com,, bob@example.com ,ANN@example.com" }).adminEmails).toEqual(["ann@example.com", "bob@example.com"]);
    expect(() => loadConfig({ ADMIN_EMAILS: "ann@example.com, bob" })).toThrow(/ADMIN_EMAILS/);
  });
});

describe("sign-in providers (OAUTH_*, OIDC_*)", () => {
  test("off by default, with the real providers' endpoints", () => {
    const { oauth } = loadConfig({});
    expect(oauth).toEqual({ github: null, google: null, oidc: null, httpTimeoutMs: 10_000 });
  });

  test("a provider is on when its client id and secret are set; base URLs lose a trailing slash", () => {
    const { oauth } = loadConfig({
      OAUTH_GITHUB_CLIENT_ID: "gh",
      OAUTH_GITHUB_CLIENT_SECRET: "ghs",
      OAUTH_GITHUB_URL: "https://ghe.example/",
      OAUTH_GITHUB_API_URL: "https://ghe.example/api/v3/",
      OAUTH_GOOGLE_CLIENT_ID: "g",
      OAUTH_GOOGLE_CLIENT_SECRET: "gs",
      OIDC_ISSUER: "https://auth.example/application/o/keyward/",
      OIDC_CLIENT_ID: "o",
      OIDC_CLIENT_SECRET: "os",
    });
    expect(oauth.github).toEqual({ clientId: "gh", clientSecret: "ghs", url: "https://ghe.example", apiUrl: "https://ghe.example/api/v3" });
    expect(oauth.google).toEqual({
      clientId: "g",
      clientSecret: "gs",
      authUrl: "https://accounts.google.com/o/oauth2/v2/auth",
      tokenUrl: "https://oauth2.googleapis.com/token",
      userinfoUrl: "https://openidconnect.googleapis.com/v1/userinfo",
    });
    // The issuer is an identifier: kept as written.
    expect(oauth.oidc).toEqual({ clientId: "o", clientSecret: "os", issuer: "https://auth.example/application/o/keyward/", name: "Single sign-on" });
  });

  test("half a pair is a mistake, not 'off'", () => {
    expect(errorOf({ OAUTH_GITHUB_CLIENT_ID: "gh" }).variable).toBe("OAUTH_GITHUB_CLIENT_SECRET");
    expect(errorOf({ OAUTH_GOOGLE_CLIENT_SECRET: "gs" }).variable).toBe("OAUTH_GOOGLE_CLIENT_ID");
    expect(errorOf({ OIDC_CLIENT_ID: "o", OIDC_CLIENT_SECRET: "os" }).variable).toBe("OIDC_ISSUER");
    expect(errorOf({ OIDC_ISSUER: "https://idp.example" }).variable).toBe("OIDC_CLIENT_ID");
  });

  test("endpoint URLs: absolute http(s), no query; https in production", () => {
    expect(errorOf({ OAUTH_GITHUB_URL: "github.com" }).variable).toBe("OAUTH_GITHUB_URL");
    expect(errorOf({ OAUTH_GOOGLE_TOKEN_URL: "ftp://x.example/token" }).variable).toBe("OAUTH_GOOGLE_TOKEN_URL");
    expect(errorOf({ OIDC_ISSUER: "https://idp.example?x=1", OIDC_CLIENT_ID: "o", OIDC_CLIENT_SECRET: "os" }).variable).toBe("OIDC_ISSUER");
    const prod = { NODE_ENV: "production", RELEASE_KEY_ENCRYPTION_KEY: HEX, BASE_URL: "https://licenses.example.com" };
    expect(errorOf({ ...prod, OAUTH_GITHUB_API_URL: "http://ghe.example/api/v3" }).variable).toBe("OAUTH_GITHUB_API_URL");
    expect(errorOf({ ...prod, OIDC_ISSUER: "http://idp.example", OIDC_CLIENT_ID: "o", OIDC_CLIENT_SECRET: "os" }).variable).toBe("OIDC_ISSUER");
    expect(loadConfig({ OIDC_ISSUER: "http://127.0.0.1:9999", OIDC_CLIENT_ID: "o", OIDC_CLIENT_SECRET: "os" }).oauth.oidc?.issuer).toBe("http://127.0.0.1:9999");
  });

  test("OIDC_NAME at most 64 characters; OAUTH_HTTP_TIMEOUT_MS from 100 to 120000", () => {
    expect(errorOf({ OIDC_NAME: "x".repeat(65) }).variable).toBe("OIDC_NAME");
    expect(errorOf({ OAUTH_HTTP_TIMEOUT_MS: "99" }).variable).toBe("OAUTH_HTTP_TIMEOUT_MS");
    expect(loadConfig({ OAUTH_HTTP_TIMEOUT_MS: "2500" }).oauth.httpTimeoutMs).toBe(2500);
  });

  test("the result is frozen", () => {
    expect(Object.isFrozen(loadConfig({}).oauth)).toBe(true);
  });
});

test("webhook concurrency: 50 per node, 8 per endpoint by default; the endpoint cap must stay below the node's", () => {
  expect(loadConfig({})).toMatchObject({ webhookConcurrency: 50, webhookEndpointConcurrency: 8 });
  expect(loadConfig({ WEBHOOK_CONCURRENCY: "4" })).toMatchObject({ webhookConcurrency: 4, webhookEndpointConcurrency: 3 });
  expect(loadConfig({ WEBHOOK_CONCURRENCY: "20", WEBHOOK_ENDPOINT_CONCURRENCY: "5" })).toMatchObject({ webhookConcurrency: 20, webhookEndpointConcurrency: 5 });
  expect(() => loadConfig({ WEBHOOK_CONCURRENCY: "8", WEBHOOK_ENDPOINT_CONCURRENCY: "8" })).toThrow(/WEBHOOK_ENDPOINT_CONCURRENCY/);
  expect(() => loadConfig({ WEBHOOK_CONCURRENCY: "1" })).toThrow(/WEBHOOK_CONCURRENCY/);
});
