// Secrets at rest: after a full scenario (issue licenses, activate, verify, record usage, rotate the
// token signing key, create API keys, publish a signed release), neither the SQLite database file nor
// its WAL contains any license key, token, API key, master key, HKDF subkey or signing seed — raw,
// hex or base64 (DECISIONS: Keys and secrets; COMMON rule 14). Both files are read while the app is
// open (recent pages live in the WAL) and again after close (checkpointed into the main file).
//
// Steps whose routes are not in the app yet are skipped with a warning; licenses are then issued
// through the service (same hashing and encryption) instead of the admin API.
import { afterAll, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { createTestApp } from "../support/app";
import { makeLicense, makePlan } from "../support/factories";
import { KeywardClient, handleTransport, missingFromTable, read, type RouteName } from "../../bench/lib/api";
import { KEY_PURPOSES, type KeyPurpose } from "../../src/crypto/hkdf";
import { openSeed } from "../../src/modules/keys/service";

const t = await createTestApp({ env: { RATE_LIMIT_PUBLIC_PER_MINUTE: "1000000", BF_MAX_FAILS: "1000" } });
afterAll(() => t.close().catch(() => undefined));

const table = (await t.app.routes()).map((r) => `${r.method} ${r.path}`);
const have = (name: RouteName) => missingFromTable(table, [name]).length === 0;
const skipped: string[] = [];
const step = (name: RouteName) => {
  if (!have(name)) skipped.push(name);
  return have(name);
};

interface Secret {
  what: string;
  /** Byte encodings to look for. */
  needles: Buffer[];
}

function stringSecret(what: string, value: string, variants: string[] = []): Secret {
  const forms = [value, ...variants];
  return {
    what,
    needles: forms.flatMap((f) => [Buffer.from(f, "utf8"), Buffer.from(Buffer.from(f).toString("base64")), Buffer.from(Buffer.from(f).toString("hex"))]),
  };
}

function bytesSecret(what: string, bytes: Uint8Array): Secret {
  const b = Buffer.from(bytes);
  return {
    what,
    needles: [b, b.toString("hex"), b.toString("hex").toUpperCase(), b.toString("base64"), b.toString("base64url")].map((x) => (typeof x === "string" ? Buffer.from(x) : x)),
  };
}

function licenseKeySecret(key: string): Secret {
  // The hint (last 4 characters) is stored by design; everything that identifies more must not be.
  const body = key.slice(key.indexOf("-") + 1);
  return stringSecret(`license key …${key.slice(-4)}`, key, [key.toLowerCase(), key.replace(/-/g, ""), body.slice(0, -5)]);
}

function dbFiles(): { name: string; bytes: Buffer }[] {
  const db = t.deps.config.databasePath;
  return [db, `${db}-wal`].filter(existsSync).map((p) => ({ name: p.slice(p.lastIndexOf("/") + 1), bytes: readFileSync(p) }));
}

function leaks(secrets: Secret[], files: { name: string; bytes: Buffer }[]): string[] {
  const out: string[] = [];
  for (const s of secrets) {
    for (const f of files) {
      const hit = s.needles.find((n) => n.length >= 8 && f.bytes.indexOf(n) >= 0);
      if (hit) out.push(`${s.what} found in ${f.name} as "${hit.toString("latin1").slice(0, 24)}…"`);
    }
  }
  return out;
}

test("database and WAL hold no plaintext secret after a full scenario", async () => {
  const c = new KeywardClient(handleTransport(t.app), t.adminKey);
  const secrets: Secret[] = [];
  const canaryEmail = `secrets-canary-${Date.now()}@example.com`;

  // Catalog and licenses (admin API when present).
  const slug = `secrets-${Math.random().toString(36).slice(2, 8)}`;
  const product = await c.createProduct({ name: "Secrets", slug });
  const features = [{ name: "calls", quotaLimit: 100 }];
  let planId: string;
  if (step("adminPlans")) planId = (await c.createPlan({ productId: product.id, name: "Pro", maxActivations: 5, features })).id;
  else planId = (await makePlan(t.deps, product.id, { maxActivations: 5 }, [{ name: "calls", valueType: "quota", value: "", quotaLimit: 100, quotaPeriod: null }])).id;
  const licenses: { id: string; key: string }[] = [];
  for (let i = 0; i < 3; i++) {
    const email = i === 0 ? canaryEmail : `owner${i}@example.com`;
    if (step("adminLicenses")) licenses.push(await c.createLicense({ productId: product.id, planId, email }));
    else {
      const { license, key } = await makeLicense(t.deps, { productId: product.id, planId, email });
      licenses.push({ id: license.id, key });
    }
  }
  for (const l of licenses) secrets.push(licenseKeySecret(l.key));

  // SDK calls: activation and verification tokens, usage.
  const tokens: string[] = [];
  if (step("activate")) {
    for (const [i, l] of licenses.entries()) tokens.push((await c.activateOk(l.key, `device-${i}`)).token);
  }
  const verifyAll = async () => {
    if (!step("verify")) return;
    for (const [i, l] of licenses.entries()) {
      const res = await c.verify(l.key, `device-${i}`);
      expect(res.status).toBe(200);
      tokens.push(read.verification(res.json.data).token);
    }
  };
  await verifyAll();
  if (step("usage")) {
    const res = await c.usage(licenses[0]!.key, "calls", 3, { "idempotency-key": "secrets-usage-1" });
    expect(res.status).toBe(200);
  }
  if (step("activate") && step("deactivate")) {
    tokens.push((await c.activateOk(licenses[2]!.key, "device-extra")).token);
    expect((await c.deactivate(licenses[2]!.key, "device-extra")).status).toBe(200);
  }

  // Key rotation, then tokens signed by the new key.
  await c.rotateSigningKey();
  await verifyAll();
  for (const token of tokens) {
    const signature = token.split(".")[1]!;
    secrets.push(stringSecret(`token …${signature.slice(-6)}`, token, [signature]));
  }

  // API keys: the harness's own admin key, one through the admin API, a product-bound one.
  const apiKeys = [t.adminKey, await c.createApiKey({ name: "ci", scopes: ["releases:write"] }), await t.apiKey(["licenses:write"], product.id)];
  for (const k of apiKeys) secrets.push(stringSecret(`API key ${k.slice(0, 10)}…`, k, [k.slice(10)]));

  // A published release makes the product's release signing key exist.
  if (step("productReleases") && step("releaseArtifacts") && step("artifactFinalize") && step("releasePublish")) {
    await c.publishSmallRelease(product.id, "1.0.0", "linux-x64", new Uint8Array(Buffer.from("secrets test artifact")));
  }

  // Key material: master key, every HKDF subkey, every signing seed (token and release keys).
  secrets.push(bytesSecret("master key", Buffer.from(t.deps.config.masterKeyHex!, "hex")));
  for (const purpose of Object.keys(KEY_PURPOSES) as KeyPurpose[]) secrets.push(bytesSecret(`subkey ${purpose}`, t.deps.secrets.subkey(purpose)));
  const signingKeys = [...(await t.deps.repos.signingKeys.list("token", null)), ...(await t.deps.repos.signingKeys.list("release", product.id))];
  expect(signingKeys.filter((k) => k.purpose === "token").length).toBeGreaterThanOrEqual(2); // rotation happened
  for (const k of signingKeys) secrets.push(bytesSecret(`${k.purpose} signing seed ${k.kid}`, openSeed(t.deps.secrets, k)));

  if (skipped.length) console.warn(`[secrets] steps skipped, route missing: ${[...new Set(skipped)].join(", ")}`);

  // While open: main file + WAL. The canary (a stored, non-secret value) proves the scan sees the data.
  const open = dbFiles();
  expect(open.some((f) => f.name.endsWith("-wal") && f.bytes.length > 0)).toBe(true);
  expect(open.some((f) => f.bytes.indexOf(Buffer.from(canaryEmail)) >= 0)).toBe(true);
  expect(leaks(secrets, open)).toEqual([]);

  // After close: everything checkpointed into the main file.
  t.deps.db.close();
  const closed = dbFiles();
  expect(closed.some((f) => f.bytes.indexOf(Buffer.from(canaryEmail)) >= 0)).toBe(true);
  expect(leaks(secrets, closed)).toEqual([]);
  console.log(`secrets: ${secrets.length} secrets × their encodings checked in ${open.map((f) => `${f.name} (${f.bytes.length} B)`).join(", ")} and after checkpoint`);
});
