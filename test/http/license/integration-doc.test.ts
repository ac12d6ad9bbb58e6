// Runs the code blocks of docs/integration.md marked `<!-- doc-test:NAME -->`, unchanged, against a
// real server: the documented client code is the tested client code.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createTestApp, type TestApp } from "../../support/app";
import { catalog, feature, patchLicense, post } from "../../support/license-api";
import { fingerprint as serverFingerprint } from "../../../src/crypto/fingerprint";
import type { RunningServer } from "../../../src/server";

const DOC = join(import.meta.dir, "../../../docs/integration.md");

function docBlocks(): Record<string, string> {
  const text = readFileSync(DOC, "utf8");
  const out: Record<string, string> = {};
  for (const m of text.matchAll(/<!-- doc-test:([\w.-]+) -->\s*```ts\n([\s\S]*?)```/g)) out[m[1]!] = m[2]!;
  return out;
}

let t: TestApp;
let s: RunningServer;
let dir: string;
let doc: { verify: typeof import("./doc-types").verifyModule; client: typeof import("./doc-types").clientModule };

beforeAll(async () => {
  t = createTestApp();
  s = t.listen();
  const blocks = docBlocks();
  expect(Object.keys(blocks).sort()).toEqual(["client.ts", "verify-token.ts"]);
  // Inside the project so `@noble/ed25519` resolves from node_modules, as in a client app.
  dir = mkdtempSync(join(import.meta.dir, ".doc-example-"));
  for (const [name, code] of Object.entries(blocks)) writeFileSync(join(dir, name), code);
  doc = { verify: await import(join(dir, "verify-token.ts")), client: await import(join(dir, "client.ts")) };
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
    const { key, product } = catalog(t, {}, [feature("export")]);
    const token = (await post(t, "/license/activate", { license_key: key, identifier: "dev-1" })).body.data.token as string;
    const keys = await trustedKeys();
    const opts = { trustedKeys: keys, identifier: "dev-1", productId: product.id };
    const claims = await doc.verify.verifyLicenseToken(token, opts);
    expect(claims).not.toBeNull();
    expect(claims!.ftr).toEqual({ export: true });
    expect(claims!.idn).toBe("dev-1");

    expect(await doc.verify.verifyLicenseToken(token, { ...opts, identifier: "dev-2" })).toBeNull(); // other machine
    expect(await doc.verify.verifyLicenseToken(token, { ...opts, productId: catalog(t).product.id })).toBeNull();
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
    const { key, product, license } = catalog(t);
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
    patchLicense(t, license.id, { status: "suspended" });
    expect(await doc.client.checkLicense(cfg, store)).toBeNull();
    expect(stored).toBeNull();
    expect(await doc.client.checkLicense({ ...cfg, baseUrl: "http://127.0.0.1:9" }, store)).toBeNull();
  });
});
