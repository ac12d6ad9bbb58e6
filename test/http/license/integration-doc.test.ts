// Runs the code blocks of docs/integration.md marked `<!-- doc-test:NAME -->`, unchanged, against a
// real server: the documented client code is the tested client code.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { createPublicKey } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createTestApp, type TestApp, type TestResponse, testEngine } from "../../support/app";
import { freshPgDatabase } from "../../support/pg";
import { makeLicense, makePlan, makeProduct } from "../../support/factories";
import { startFakeStripe, type FakeStripe } from "../../support/fake-stripe";
import { attachAddon, catalog, feature, patchLicense, post, quota } from "../../support/license-api";
import { differences, docExamples } from "../../support/doc-examples";
import { fingerprint as serverFingerprint } from "../../../src/crypto/fingerprint";
import { sha256Hex } from "../../../src/crypto/hash";
import { fixedClock } from "../../../src/shared/clock";
import type { RunningServer } from "../../../src/server";

const DOC = join(import.meta.dir, "../../../docs/integration.md");
// These tests build apps and run real crypto: quick alone, but past Bun's 5 s default on a loaded machine.
setDefaultTimeout(30_000);

function docBlocks(): Record<string, string> {
  const text = readFileSync(DOC, "utf8");
  const out: Record<string, string> = {};
  for (const m of text.matchAll(/<!-- doc-test:([\w.-]+) -->\s*```ts\n([\s\S]*?)```/g)) out[m[1]!] = m[2]!;
  return out;
}

let t: TestApp;
let s: RunningServer;
let dir: string;
let doc: {
  verify: typeof import("./doc-types").verifyModule;
  client: typeof import("./doc-types").clientModule;
  pem: typeof import("./doc-types").pemModule;
};

beforeAll(async () => {
  // The documented client checks a token's exp against the machine's clock, so the server issues
  // them at today's time (with the default fixed clock, 2026-11-21, every token had expired a week on).
  t = await createTestApp({ clock: fixedClock(Date.now()) });
  s = t.listen();
  const blocks = docBlocks();
  expect(Object.keys(blocks).sort()).toEqual(["client.ts", "verify-pem.ts", "verify-token.ts"]);
  // Inside the project so `@noble/ed25519` resolves from node_modules, as in a client app.
  dir = mkdtempSync(join(import.meta.dir, ".doc-example-"));
  for (const [name, code] of Object.entries(blocks)) writeFileSync(join(dir, name), code);
  doc = {
    verify: await import(join(dir, "verify-token.ts")),
    client: await import(join(dir, "client.ts")),
    pem: await import(join(dir, "verify-pem.ts")),
  };
});
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  await t.close();
});

async function trustedKeys(): Promise<Record<string, string>> {
  const res = await fetch(`${s.url}/api/v1/license/keys`);
  const keys = ((await res.json()) as { data: { keys: { kid: string; public_key: string }[] } }).data.keys;
  return Object.fromEntries(keys.map((k) => [k.kid, k.public_key]));
}

describe("docs/integration.md code", () => {
  test("fingerprint() matches the server's fpr formula", async () => {
    expect(await doc.verify.fingerprint("dev-1", "0192f0c4-0000-7000-8000-000000000000")).toBe(
      serverFingerprint("dev-1", "0192f0c4-0000-7000-8000-000000000000"),
    );
  });

  test("verifyLicenseToken accepts a real token and rejects every kind of mismatch", async () => {
    const { key, product } = await catalog(t, {}, [feature("export")]);
    const token = (await post(t, "/license/activate", { license_key: key, identifier: "dev-1" })).body.data.token as string;
    const keys = await trustedKeys();
    const opts = { trustedKeys: keys, identifier: "dev-1", productId: product.id };
    const claims = await doc.verify.verifyLicenseToken(token, opts);
    expect(claims).not.toBeNull();
    expect(claims!.ftr).toEqual({ export: true });
    expect(claims!.idn).toBe("dev-1");

    expect(await doc.verify.verifyLicenseToken(token, { ...opts, identifier: "dev-2" })).toBeNull(); // other machine
    expect(await doc.verify.verifyLicenseToken(token, { ...opts, productId: (await catalog(t)).product.id })).toBeNull();
    expect(await doc.verify.verifyLicenseToken(token, { ...opts, trustedKeys: {} })).toBeNull(); // unknown kid
    expect(await doc.verify.verifyLicenseToken(token, { ...opts, nowSeconds: claims!.exp })).toBeNull(); // expired
    expect(await doc.verify.verifyLicenseToken(token, { ...opts, nowSeconds: claims!.exp - 1 })).not.toBeNull();
    const [payload, sig] = token.split(".") as [string, string];
    const forged = Buffer.from(JSON.stringify({ ...claims, ftr: { export: true, enterprise: true } })).toString("base64url");
    expect(await doc.verify.verifyLicenseToken(`${forged}.${sig}`, opts)).toBeNull();
    // Flip one character in the middle (the last one carries padding bits a decoder may ignore).
    const flipped = sig.slice(0, 20) + (sig[20] === "A" ? "B" : "A") + sig.slice(21);
    expect(await doc.verify.verifyLicenseToken(`${payload}.${flipped}`, opts)).toBeNull();
    expect(await doc.verify.verifyLicenseToken("garbage", opts)).toBeNull();
    expect(await doc.verify.verifyLicenseToken("a.b!", opts)).toBeNull();
  });

  test("checkLicense: online verify, offline fallback to the cached token, 404 clears it", async () => {
    const { key, product, license } = await catalog(t);
    await post(t, "/license/activate", { license_key: key, identifier: "box" });
    let stored: string | null = null;
    const store = { load: () => stored, save: (tk: string) => void (stored = tk), clear: () => void (stored = null) };
    const cfg = { baseUrl: s.url, licenseKey: key, identifier: "box", productId: product.id, trustedKeys: await trustedKeys() };

    const online = await doc.client.checkLicense(cfg, store);
    expect(online?.lid).toBe(license.id);
    expect(stored).not.toBeNull();

    // Server unreachable: the cached token carries the app.
    const offline = await doc.client.checkLicense({ ...cfg, baseUrl: "http://127.0.0.1:9" }, store);
    expect(offline?.lid).toBe(license.id);

    // Suspended: verify answers 404, the client forgets the token and is unlicensed.
    await patchLicense(t, license.id, { status: "suspended" });
    expect(await doc.client.checkLicense(cfg, store)).toBeNull();
    expect(stored).toBeNull();
    expect(await doc.client.checkLicense({ ...cfg, baseUrl: "http://127.0.0.1:9" }, store)).toBeNull();
  });
});

describe("docs/integration.md: the pem form of the public keys", () => {
  test("the pem of /license/pubkey verifies a real token with node:crypto and with WebCrypto", async () => {
    const { key } = await catalog(t, {}, [feature("export")]);
    const token = (await post(t, "/license/activate", { license_key: key, identifier: "pem-1" })).body.data.token as string;
    const pub = ((await (await fetch(`${s.url}/api/v1/license/pubkey`)).json()) as { data: { kid: string; pem: string } }).data;
    expect(JSON.parse(Buffer.from(token.split(".")[0]!, "base64url").toString()).kid).toBe(pub.kid);

    expect(doc.pem.signatureValidNode(token, pub.pem)).toBe(true);
    expect(await doc.pem.signatureValidWebCrypto(token, pub.pem)).toBe(true);

    // The same functions refuse a tampered payload, a flipped signature and another key.
    const [payload, sig] = token.split(".") as [string, string];
    const tampered = `${payload.slice(0, -2)}${payload.endsWith("AA") ? "BB" : "AA"}.${sig}`;
    const flipped = `${payload}.${sig.slice(0, 20)}${sig[20] === "A" ? "B" : "A"}${sig.slice(21)}`;
    const other = createPublicKey(
      "-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEAvHy8tWNjdfodgkNNRmck2SN39TuYBpXdSdJtDOEiBaU=\n-----END PUBLIC KEY-----\n",
    ).export({ format: "pem", type: "spki" }) as string;
    for (const bad of [tampered, flipped, "garbage"]) {
      expect(doc.pem.signatureValidNode(bad, pub.pem)).toBe(false);
      expect(await doc.pem.signatureValidWebCrypto(bad, pub.pem)).toBe(false);
    }
    expect(doc.pem.signatureValidNode(token, other)).toBe(false);
    expect(await doc.pem.signatureValidWebCrypto(token, other)).toBe(false);
  });

  test("after a rotation, every key of /license/keys verifies the tokens it signed through its pem", async () => {
    // Rotates the shared app's key; the tests above fetch the trusted keys afresh each time.
    const c = await catalog(t);
    const before = (await post(t, "/license/activate", { license_key: c.key, identifier: "r" })).body.data.token as string;
    expect((await t.request("POST", "/api/v1/admin/signing-keys/rotate")).status).toBe(200);
    const after = (await post(t, "/license/verify", { license_key: c.key, identifier: "r" })).body.data.token as string;
    const keys = (await t.request("GET", "/api/v1/license/keys")).body.data.keys as { kid: string; pem: string }[];
    const pemOf = (token: string) => keys.find((k) => k.kid === JSON.parse(Buffer.from(token.split(".")[0]!, "base64url").toString()).kid)!.pem;
    for (const token of [before, after]) {
      expect(doc.pem.signatureValidNode(token, pemOf(token))).toBe(true);
      expect(await doc.pem.signatureValidWebCrypto(token, pemOf(token))).toBe(true);
    }
    expect(pemOf(before)).not.toBe(pemOf(after));
  });
});

// ---------------------------------------------------------------------------------------------------
// Every ```http request block of the page that is followed by a ```json response block is an example
// of a real exchange. Each one is replayed here against a catalog built like the page's story (plan
// "Pro" with export, beta-ui, max-projects and a 1000 api-calls quota, plus a 500 add-on; the fixed
// clock at 2026-11-21T08:00Z), and the documented response must be the real one: the same envelope,
// the same fields at every level with the same JSON types, and the same values except where the
// page elides them with "…" or they are random (ids, tokens).

const RANDOM = new Set(["license_id", "plan_id", "token", "session_id"]);
const examplesOfPage = () => docExamples(DOC);

describe("docs/integration.md: every documented response is the real one", () => {
  const MASTER = "5".repeat(64);
  const SEED_ACTIVE = "a1".repeat(32); // the key shown in the page's /license/pubkey example
  const SEED_RETIRED = "b2".repeat(32);
  let ex: TestApp;
  let exDir: string;
  let exPg: Awaited<ReturnType<typeof freshPgDatabase>> | null = null;
  let stripe: FakeStripe;

  beforeAll(async () => {
    stripe = await startFakeStripe();
    // The page's keys: b2… created 2026-01-10 and retired when a1… became the active key.
    exDir = mkdtempSync(join(tmpdir(), "keyward-doc-"));
    // Two starts on one database: the same data directory (SQLite) or the same database (PostgreSQL).
    exPg = testEngine() === "postgres" ? await freshPgDatabase("integration_doc") : null;
    const env = (seed: string) => ({ RELEASE_KEY_ENCRYPTION_KEY: MASTER, LICENSE_SIGNING_KEY: seed, ...stripe.env(), ...(exPg ? { DATABASE_URL: exPg.url } : {}) });
    await (await createTestApp({ dataDir: exDir, env: env(SEED_RETIRED), clock: fixedClock("2026-01-10T09:00:00.000Z") })).deps.db.close(); // keeps exDir
    ex = await createTestApp({ dataDir: exDir, env: env(SEED_ACTIVE) });
  });
  afterAll(async () => {
    await ex.close();
    await stripe.stop();
    await exPg?.drop();
    rmSync(exDir, { recursive: true, force: true });
  });

  /** A license on the page's "Pro" plan, with its 500 api-calls add-on and its first activation. */
  async function pro() {
    const product = await makeProduct(ex.deps);
    const plan = await makePlan(ex.deps, product.id, { name: "Pro", graceDays: 7 }, [
      feature("export"),
      feature("beta-ui", { value: "false" }),
      feature("max-projects", { valueType: "int", value: "20" }),
      quota("api-calls", 1000),
    ]);
    const { license, key } = await makeLicense(ex.deps, {
      productId: product.id,
      planId: plan.id,
      supportUntil: new Date("2027-11-21T08:00:00.000Z"),
      externalCustomerId: "cus_123",
    });
    await attachAddon(ex, product.id, license.id, quota("api-calls", 500));
    return { key, productId: product.id };
  }
  async function floating() {
    const product = await makeProduct(ex.deps);
    const plan = await makePlan(ex.deps, product.id, { name: "Floating", floating: true, maxActivations: 5 });
    const { key } = await makeLicense(ex.deps, { productId: product.id, planId: plan.id });
    await post(ex, "/license/floating/checkout", { license_key: key, identifier: "ws-16" }); // another seat in use
    return key;
  }
  const usage = (key: string, quantity: number) => post(ex, "/license/usage", { license_key: key, feature: "api-calls", quantity });

  // One real exchange per documented example, keyed by "METHOD /path" as written on the page.
  const REAL: Record<string, () => Promise<TestResponse>> = {
    "POST /license/activate": async () => {
      const { key, productId } = await pro();
      return post(ex, "/license/activate", { license_key: key, identifier: "a3f9", label: "Ada's laptop", product_id: productId });
    },
    "POST /license/verify": async () => {
      const { key, productId } = await pro();
      await post(ex, "/license/activate", { license_key: key, identifier: "a3f9" });
      return post(ex, "/license/verify", { license_key: key, identifier: "a3f9", product_id: productId });
    },
    "GET /license/pubkey": () => ex.request("GET", "/api/v1/license/pubkey"),
    "GET /license/keys": () => ex.request("GET", "/api/v1/license/keys"),
    "POST /license/deactivate": async () => {
      const { key } = await pro();
      await post(ex, "/license/activate", { license_key: key, identifier: "a3f9" });
      return post(ex, "/license/deactivate", { license_key: key, identifier: "a3f9" });
    },
    "POST /license/entitlements": async () => {
      const { key } = await pro();
      await usage(key, 120);
      return post(ex, "/license/entitlements", { license_key: key, feature: "api-calls" });
    },
    "POST /license/usage": async () => {
      const { key } = await pro();
      await usage(key, 120);
      return post(ex, "/license/usage", { license_key: key, feature: "api-calls", quantity: 3, metadata: { job: "export-77" } });
    },
    "POST /license/usage/status": async () => {
      const { key } = await pro();
      await usage(key, 123);
      return post(ex, "/license/usage/status", { license_key: key, feature: "api-calls" });
    },
    "POST /license/floating/checkout": async () => {
      const key = await floating();
      return post(ex, "/license/floating/checkout", { license_key: key, identifier: "ws-17", label: "Lab PC 17" });
    },
    "POST /license/floating/heartbeat": async () => {
      const key = await floating();
      await post(ex, "/license/floating/checkout", { license_key: key, identifier: "ws-17" });
      ex.clock.advance(10 * 60_000);
      try {
        return await post(ex, "/license/floating/heartbeat", { license_key: key, identifier: "ws-17" });
      } finally {
        ex.clock.advance(-10 * 60_000);
      }
    },
    "POST /license/support/checkout": async () => {
      const product = await makeProduct(ex.deps);
      const plan = await makePlan(ex.deps, product.id, { name: "Pro", supportRenewalPriceId: "price_support" });
      const { key } = await makeLicense(ex.deps, { productId: product.id, planId: plan.id, supportUntil: new Date("2027-11-21T08:00:00.000Z") });
      return post(ex, "/license/support/checkout", { license_key: key });
    },
    "POST /license/floating/checkin": async () => {
      const key = await floating();
      await post(ex, "/license/floating/checkout", { license_key: key, identifier: "ws-17" });
      return post(ex, "/license/floating/checkin", { license_key: key, identifier: "ws-17" });
    },
  };

  const examples = examplesOfPage();

  test("the page has an example for each of these routes, and each has a replay here", () => {
    expect(examples.map((e) => `${e.method} ${e.path}`).sort()).toEqual(Object.keys(REAL).sort());
  });

  test("documented request bodies use only fields the route accepts", async () => {
    const openapi = (await ex.request("GET", "/api/v1/openapi.json")).body as { paths: Record<string, any> };
    for (const e of examples.filter((x) => x.requestBody)) {
      const schema = openapi.paths[`/api/v1${e.path}`][e.method.toLowerCase()].requestBody.content["application/json"].schema;
      const unknown = Object.keys(e.requestBody!).filter((k) => !(k in schema.properties));
      expect({ route: e.path, unknown }).toEqual({ route: e.path, unknown: [] });
    }
  });

  for (const e of examplesOfPage()) {
    test(`${e.method} ${e.path}: the documented response is the real one`, async () => {
      const real = await REAL[`${e.method} ${e.path}`]!();
      expect(real.status).toBe(200);
      expect({ route: e.path, differences: differences(e.response, real.body, RANDOM) }).toEqual({ route: e.path, differences: [] });
    });
  }

  test("the documented keys are self-consistent: kid = first 16 hex of SHA-256 of the key inside pem", () => {
    const keys: { kid: string; pem: string }[] = [];
    const collect = (v: unknown): void => {
      if (Array.isArray(v)) v.forEach(collect);
      else if (v && typeof v === "object") {
        const o = v as Record<string, unknown>;
        if (typeof o.kid === "string" && typeof o.pem === "string") keys.push({ kid: o.kid, pem: o.pem });
        Object.values(o).forEach(collect);
      }
    };
    examplesOfPage().forEach((e) => collect(e.response));
    expect(keys.length).toBe(3);
    for (const k of keys) {
      const raw = createPublicKey(k.pem).export({ format: "der", type: "spki" }).subarray(-32);
      expect(sha256Hex(raw).slice(0, 16)).toBe(k.kid);
    }
  });
});
