// COMMON rule 14 / DECISIONS "Keys and secrets": no plaintext license key, API key, private-key seed
// or master key in the SQLite file, its WAL, or the logs. The raw bytes are searched, so this holds
// for every table and index, including audit rows and anything a future column might add.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../../../src/config";
import { createDeps } from "../../../src/container";
import { startServer, type RunningServer } from "../../../src/server";
import { fixedClock } from "../../../src/shared/clock";
import { createLogger } from "../../../src/shared/logger";
import { SYSTEM_ACTOR } from "../../../src/shared/actor";
import { createApiKey } from "../../../src/modules/api-keys/service";
import { openSeed } from "../../../src/modules/keys/service";
import { KEY_PURPOSES, type KeyPurpose } from "../../../src/crypto/hkdf";
import { GENERATED_MASTER_KEY_FILE } from "../../../src/modules/keys/secrets";
import type { Deps } from "../../../src/deps";
import { testEngine, testEnv } from "../../support/app";
import { freshPgDatabase } from "../../support/pg";
import { makeCatalog, makeLicense } from "../../support/factories";
import { startSmtpServer, type TestSmtpServer } from "../../support/smtp";
import { deliverOutbox } from "../../../src/modules/outbox/service";

const logLines: string[] = [];
let dataDir: string;
let deps: Deps;
let server: RunningServer;

const licenseKeys: string[] = [];
/** Session cookie tokens, sign-in attempt cookie tokens, and the one-time codes that opened them (issues 10, 25). */
const sessionTokens: string[] = [];
const inviteTokens: string[] = [];
let smtp: TestSmtpServer;
const apiKeys: string[] = [];
/** whsec_ secrets of webhook endpoints: shown once, stored sealed. */
const webhookSecrets: string[] = [];
const knownPlain: string[] = [];
let requestCount = 0; // non-secret values that must be found (proves the search sees data)

async function call(method: string, path: string, opts: { key?: string; body?: string; headers?: Record<string, string> } = {}) {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.key) headers.authorization = `Bearer ${opts.key}`;
  if (opts.body !== undefined && !headers["content-type"]) headers["content-type"] = "application/json";
  // A real server, so the access log (written after the response) runs as in production.
  requestCount += 1;
  const res = await fetch(`${server.url}${path}`, { method, headers, body: opts.body });
  return { status: res.status, json: (await res.json().catch(() => null)) as any, setCookie: res.headers.get("set-cookie") };
}

/** Every encoding a leaked secret could take. */
function forms(secret: Uint8Array | string): Buffer[] {
  if (typeof secret === "string") {
    return [...new Set([secret, secret.toLowerCase(), secret.toUpperCase(), secret.replaceAll("-", "")])].map((s) => Buffer.from(s));
  }
  const b = Buffer.from(secret);
  return [
    b,
    Buffer.from(b.toString("hex")),
    Buffer.from(b.toString("hex").toUpperCase()),
    Buffer.from(b.toString("base64")),
    Buffer.from(b.toString("base64url")),
  ];
}

function findings(haystack: Buffer, secrets: Record<string, Uint8Array | string>): string[] {
  return Object.entries(secrets).flatMap(([name, s]) => (forms(s).some((f) => haystack.includes(f)) ? [name] : []));
}

async function allSecrets(): Promise<Record<string, Uint8Array | string>> {
  const out: Record<string, Uint8Array | string> = {};
  licenseKeys.forEach((k, i) => (out[`license key #${i}`] = k));
  sessionTokens.forEach((k, i) => (out[`session token #${i}`] = k));
  inviteTokens.forEach((k, i) => (out[`invite token #${i}`] = k));
  webhookSecrets.forEach((k, i) => {
    out[`webhook secret #${i}`] = k;
    out[`webhook secret #${i} (key bytes)`] = Buffer.from(k.slice("whsec_".length), "base64");
  });
  apiKeys.forEach((k, i) => {
    out[`API key #${i}`] = k;
    out[`API key #${i} (random part)`] = k.slice(3);
  });
  (await deps.tokenKeys.list()).forEach((r) => (out[`token seed ${r.kid}`] = openSeed(deps.secrets, r)));
  out["master key"] = Buffer.from(deps.config.masterKeyHex!, "hex");
  for (const p of Object.keys(KEY_PURPOSES) as KeyPurpose[]) out[`subkey ${p}`] = deps.secrets.subkey(p);
  return out;
}

/** On the PostgreSQL pass the same checks read a full pg_dump of the database instead of the file. */
let pgDb: Awaited<ReturnType<typeof freshPgDatabase>> | null = null;
function pgDump(): Buffer {
  const r = Bun.spawnSync(["pg_dump", "--data-only", "--format=plain", "--no-owner", pgDb!.url], { stdout: "pipe", stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(`pg_dump failed: ${r.stderr.toString()}`);
  return Buffer.from(r.stdout);
}

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "keyward-secrets-"));
  pgDb = testEngine() === "postgres" ? await freshPgDatabase("secrets_at_rest") : null;
  smtp = await startSmtpServer();
  const config = loadConfig(
    testEnv(dataDir, { LOG_LEVEL: "debug", SMTP_URL: smtp.url, MAIL_FROM: "noreply@keyward.test", ...(pgDb ? { DATABASE_URL: pgDb.url } : {}) }),
  );
  deps = await createDeps(config, fixedClock(), createLogger("debug", (l) => logLines.push(l)));
  server = startServer(deps);

  const admin = (await createApiKey(deps, SYSTEM_ACTOR, { name: "admin", scopes: ["admin"], productId: null })).key;
  apiKeys.push(admin);

  // Licenses through the factories (the real issue path: hash, seal, audit row).
  for (let i = 0; i < 5; i++) {
    const { key, license, product, plan } = await makeCatalog(deps);
    licenseKeys.push(key);
    knownPlain.push(license.email, product.slug);
    licenseKeys.push((await makeLicense(deps, { productId: product.id, planId: plan.id })).key);
  }
  // And through the admin API, whose responses carry the key (logged requests, audit rows).
  const catalog = await makeCatalog(deps);
  licenseKeys.push(catalog.key);
  const issued = await call("POST", "/api/v1/admin/licenses", {
    key: admin,
    body: JSON.stringify({ product_id: catalog.product.id, plan_id: catalog.plan.id, email: "http@example.com" }),
  });
  expect(issued.status).toBe(201);
  licenseKeys.push(issued.json.data.license_key);
  const fetched = await call("GET", `/api/v1/admin/licenses/${issued.json.data.id}`, { key: admin });
  expect(fetched.json.data.license_key).toBe(issued.json.data.license_key);

  // API keys minted over HTTP, then used.
  const minted = await call("POST", "/api/v1/admin/api-keys", { key: admin, body: JSON.stringify({ name: "ci", scopes: ["releases:write"] }) });
  expect(minted.status).toBe(201);
  apiKeys.push(minted.json.data.key);
  expect((await call("GET", "/api/v1/admin/products", { key: minted.json.data.key })).status).toBe(200);

  // A webhook endpoint (a literal public address: nothing is sent), its secret rotated once.
  const hook = await call("POST", "/api/v1/admin/webhooks", { key: admin, body: JSON.stringify({ url: "https://93.184.216.34/in", events: ["*"], ed25519: true }) });
  expect(hook.status).toBe(201);
  webhookSecrets.push(hook.json.data.secret);
  const rotated = await call("POST", `/api/v1/admin/webhooks/${hook.json.data.id}/rotate-secret`, { key: admin });
  expect(rotated.status).toBe(200);
  webhookSecrets.push(rotated.json.data.secret);

  // Rotate the token key twice: every retired seed stays in the table, sealed.
  for (let i = 0; i < 2; i++) expect((await call("POST", "/api/v1/admin/signing-keys/rotate", { key: admin })).status).toBe(200);
  expect((await deps.tokenKeys.list()).length).toBe(3);
  knownPlain.push(...(await deps.tokenKeys.list()).map((k) => k.publicKeyHex));

  // Credentials in every place a client might put them, including wrong ones that hit error paths.
  const lk = licenseKeys[0]!;
  await call("POST", "/api/v1/license/activate", { body: JSON.stringify({ license_key: lk, identifier: "dev-1" }) });
  await call("POST", "/api/v1/license/verify", { body: JSON.stringify({ license_key: lk.toLowerCase(), identifier: "dev-1" }) });
  await call("POST", "/api/v1/license/activate", { body: `{"license_key":"${lk}", oops` });
  await call("GET", `/api/v1/license/pubkey?license_key=${encodeURIComponent(lk)}`);
  await call("GET", "/api/v1/license/pubkey", { headers: { authorization: `License ${lk}` } });
  await call("GET", "/api/v1/admin/products", { key: lk });
  await call("GET", `/api/v1/admin/products?api_key=${admin}`, { key: `${admin.slice(0, -1)}X` });
  await call("POST", "/api/v1/admin/products", { key: admin, body: JSON.stringify({ name: lk, slug: "Not A Slug" }) });
  await call("POST", "/api/v1/admin/products", { key: admin, body: `name=${lk}`, headers: { "content-type": "text/plain" } });

  // Sign in with an emailed one-time code (a real SMTP server), then use the session cookie.
  const ownerCatalog = await makeCatalog(deps);
  const owner = ownerCatalog.license.email;
  licenseKeys.push(ownerCatalog.key);
  knownPlain.push(owner.toLowerCase());
  const asked = await call("POST", "/api/v1/auth/otp/request", { body: JSON.stringify({ email: owner }) });
  expect(asked.status).toBe(200);
  const attempt = asked.setCookie!.split(";")[0]!;
  sessionTokens.push(attempt.slice("sign_in_attempt=".length));
  await deliverOutbox(deps);
  const code = /\b(\d{6})\b/.exec(smtp.received.at(-1)!.text)![1]!;
  const wrongCode = code === "000000" ? "000001" : "000000";
  await call("POST", "/api/v1/auth/otp/verify", { body: JSON.stringify({ email: owner, code: wrongCode }), headers: { cookie: attempt } });
  const signedIn = await fetch(`${server.url}/api/v1/auth/otp/verify`, {
    method: "POST",
    headers: { "content-type": "application/json", cookie: attempt },
    body: JSON.stringify({ email: owner, code }),
  });
  requestCount += 1;
  expect(signedIn.status).toBe(200);
  const cookie = signedIn.headers.get("set-cookie")!.split(";")[0]!;
  sessionTokens.push(cookie.slice("session=".length));
  expect((await call("GET", "/api/v1/auth/me", { headers: { cookie } })).status).toBe(200);
  await call("GET", "/api/v1/admin/products", { headers: { cookie } });

  // Invite a seat (twice: the second invite rotates the token), deliver both emails by SMTP, accept
  // the second link; the accept opens a session of its own.
  const invitee = "invitee@example.com";
  knownPlain.push(invitee);
  for (let i = 0; i < 2; i++) {
    const added = await call("POST", "/api/v1/portal/seats/add", { headers: { cookie }, body: JSON.stringify({ license_key: ownerCatalog.key, email: invitee }) });
    expect({ status: added.status, body: added.json }).toMatchObject({ status: 200 });
    await deliverOutbox(deps);
    inviteTokens.push(/#token=([0-9a-f]{64})/.exec(smtp.received.at(-1)!.text)![1]!);
  }
  const acceptedInvite = await fetch(`${server.url}/api/v1/invites/accept`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ token: inviteTokens[1] }),
  });
  requestCount += 1;
  expect(acceptedInvite.status).toBe(200);
  sessionTokens.push(acceptedInvite.headers.get("set-cookie")!.split(";")[0]!.slice("session=".length));
  await call("POST", "/api/v1/invites/accept", { body: JSON.stringify({ token: inviteTokens[0] }) }); // rotated away: 404
  expect(requestCount).toBeGreaterThanOrEqual(15);
});

afterAll(async () => {
  await server.stop();
  await smtp.stop();
  await pgDb?.drop();
  if (existsSync(dataDir)) rmSync(dataDir, { recursive: true, force: true });
});

describe("the search itself", () => {
  test("finds a planted secret in every encoding it claims to cover", () => {
    const seed = new Uint8Array(32).map((_, i) => i * 7 + 1);
    const key = "KW-ABCDEFGH-JKLMNPQR-STUVWXYZ-23456789";
    for (const planted of forms(seed)) expect(findings(Buffer.concat([Buffer.from("xx"), planted, Buffer.from("yy")]), { seed })).toEqual(["seed"]);
    for (const planted of forms(key)) expect(findings(Buffer.from(`{"k":"${planted}"}`), { key })).toEqual(["key"]);
    expect(findings(Buffer.from("nothing here"), { seed, key })).toEqual([]);
  });
});

describe("at rest", () => {
  // Each engine's form of "at rest": a full pg_dump on the PostgreSQL pass, the file and WAL otherwise.
  const onPg = testEngine() === "postgres";
  (onPg ? test : test.skip)("the database (PostgreSQL: a full pg_dump) holds no license key, API key, seed, master key or subkey", async () => {
    const secrets = await allSecrets();
    const dump = pgDump();
    for (const plain of knownPlain) expect({ plain, found: dump.includes(Buffer.from(plain)) }).toEqual({ plain, found: true });
    expect({ dump: "pg_dump", leaked: findings(dump, secrets) }).toEqual({ dump: "pg_dump", leaked: [] });
  });

  (onPg ? test.skip : test)("the database file and its WAL hold no license key, API key, seed, master key or subkey", async () => {
    const secrets = await allSecrets();
    expect(Object.keys(secrets).length).toBeGreaterThan(20);
    const db = readFileSync(deps.config.databasePath);
    const walPath = `${deps.config.databasePath}-wal`;
    const wal = existsSync(walPath) ? readFileSync(walPath) : Buffer.alloc(0);
    expect(db.length + wal.length).toBeGreaterThan(0);
    // Control: values that are stored in clear are found, so the search does see the rows.
    const both = Buffer.concat([db, wal]);
    for (const plain of knownPlain) expect({ plain, found: both.includes(Buffer.from(plain)) }).toEqual({ plain, found: true });
    expect({ file: "keyward.db", leaked: findings(db, secrets) }).toEqual({ file: "keyward.db", leaked: [] });
    expect({ file: "keyward.db-wal", leaked: findings(wal, secrets) }).toEqual({ file: "keyward.db-wal", leaked: [] });
  });

  test("after a graceful stop (WAL checkpointed into the main file) the file still holds none", async () => {
    const secrets = await allSecrets();
    await server.stop();
    if (pgDb) {
      expect(findings(pgDump(), secrets)).toEqual([]);
      return;
    }
    const db = readFileSync(deps.config.databasePath);
    for (const plain of knownPlain) expect(db.includes(Buffer.from(plain))).toBe(true);
    expect(findings(db, secrets)).toEqual([]);
  });
});

describe("logs", () => {
  test("every request was logged, and no line holds a license key or API key", async () => {
    // Control: the sink saw one access-log line per request. The line is written after the response
    // is sent, so the last one may still be on its way.
    const logged = () => logLines.filter((l) => l.includes('"msg":"request"')).length;
    for (let i = 0; i < 250 && logged() < requestCount; i++) await Bun.sleep(20);
    expect(logged()).toBe(requestCount);
    const log = Buffer.from(logLines.join("\n"));
    const credentials: Record<string, string> = {};
    licenseKeys.forEach((k, i) => (credentials[`license key #${i}`] = k));
    apiKeys.forEach((k, i) => (credentials[`API key #${i}`] = k.slice(3)));
    sessionTokens.forEach((k, i) => (credentials[`session token #${i}`] = k));
    // With SMTP configured, invite links go out by mail only (the log exception is for no-SMTP mode).
    inviteTokens.forEach((k, i) => (credentials[`invite token #${i}`] = k));
    expect(sessionTokens.length).toBe(3); // the one-time code's attempt and session, and the invite's
    expect(inviteTokens.length).toBe(2);
    expect(findings(log, credentials)).toEqual([]);
  });

  test("a generated master key is announced by path, never by value", async () => {
    const dir = mkdtempSync(join(tmpdir(), "keyward-genkey-"));
    const lines: string[] = [];
    const env = testEnv(dir, { LOG_LEVEL: "debug" });
    delete (env as Record<string, string | undefined>).RELEASE_KEY_ENCRYPTION_KEY;
    const d = await createDeps(loadConfig(env), fixedClock(), createLogger("debug", (l) => lines.push(l)));
    try {
      const hex = readFileSync(join(dir, GENERATED_MASTER_KEY_FILE), "utf8").trim();
      expect(hex).toMatch(/^[0-9a-f]{64}$/);
      expect(lines.some((l) => l.includes("generated a master key") && l.includes(GENERATED_MASTER_KEY_FILE))).toBe(true);
      expect(findings(Buffer.from(lines.join("\n")), { "master key": Buffer.from(hex, "hex") })).toEqual([]);
      expect(findings(readFileSync(d.config.databasePath), { "master key": Buffer.from(hex, "hex") })).toEqual([]);
    } finally {
      d.db.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
