// Feed documents checked against what their clients do: the appcast parses and is in Sparkle's
// namespace, its edSignature verifies with node:crypto against the exported Sparkle key, the Tauri
// signature verifies with the real `minisign -V` against the exported minisign key, and the rendered
// documents match golden files (test/golden/, volatile parts normalized).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createPublicKey, verify } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { XMLParser } from "fast-xml-parser";
import { createTestApp, type TestApp } from "../../support/app";
import { makeProduct } from "../../support/factories";
import { HOUR } from "../../../src/shared/clock";
import type { Product } from "../../../src/modules/products/repo";
import { getObject, publishRelease } from "../releases/support";
import { xmllintCheck, xmllintXPath } from "../../support/xmllint";
import { toolTest } from "../../support/tools";

const SPARKLE_NS = "http://www.andymatuschak.org/xml-namespaces/sparkle";
// docs/updates.md ("feed.xml"): a published name; changing it breaks whoever reads the elements.
const KEYWARD_NS = "https://keyward.dev/xml-namespaces/keyward";
const GOLDEN = join(import.meta.dir, "../../golden");

let t: TestApp;
let product: Product;
let keys: { sparkle_public_key: string; minisign_public_key: string; tauri_public_key: string; kid: string };

// Deterministic artifact bytes, so sha256 and size are stable in the golden files.
const bytesOf = (version: string, platform: string) => new TextEncoder().encode(`Acme Editor ${version} (${platform})\n`.repeat(64));

beforeAll(async () => {
  t = await createTestApp();
  product = await makeProduct(t.deps, {
    name: "Acme <Editor> & Co",
    slug: "acme-editor",
    minimumSupportedVersion: "1.1.0",
    minimumSupportedMessage: "Versions before 1.1.0 are no longer supported.",
  });
  const platforms = ["darwin-arm64", "windows-x64", "windows-arm64"] as const;
  t.clock.set("2026-11-01T10:00:00.000Z");
  await publishRelease(t, product.id, "1.0.0", { platforms: [...platforms], notes: "<p>First release</p>", bytes: (p) => bytesOf("1.0.0", p) });
  t.clock.set("2026-11-10T12:30:00.000Z");
  await publishRelease(t, product.id, "1.1.0", {
    platforms: [...platforms],
    notes: "<p>Fixes &amp; speed</p> and a literal ]]> in the notes",
    minimum_os_version: "10.0.17763",
    bytes: (p) => bytesOf("1.1.0", p),
  });
  t.clock.set("2026-11-20T08:00:00.000Z");
  await publishRelease(t, product.id, "1.2.0-beta.1", { channel: "beta", platforms: [...platforms], bytes: (p) => bytesOf("1.2.0-beta.1", p) });
  t.clock.set("2026-11-21T08:00:00.000Z");
  const res = await t.request("GET", `/api/v1/admin/products/${product.id}/signing-keys`);
  expect(res.status).toBe(200);
  keys = res.body.data.items.find((k: { active: boolean }) => k.active);
});
afterAll(() => t.close());

/**
 * Replaces what differs between runs (random ids and key material) with stable placeholders, in
 * braces so that the golden appcast stays well-formed XML (xmllint checks it below).
 */
function normalize(text: string): string {
  const ids = new Map<string, string>();
  return text
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}/g, (id) => {
      if (!ids.has(id)) ids.set(id, `{id-${ids.size + 1}}`);
      return ids.get(id)!;
    })
    .replaceAll(keys.kid, "{kid}")
    .replace(/sparkle:edSignature="[A-Za-z0-9+/=]{88}"/g, 'sparkle:edSignature="{ed-signature}"')
    .replace(/"ed_signature": "[A-Za-z0-9+/=]{88}"/g, '"ed_signature": "{ed-signature}"')
    .replace(/"signature": "[A-Za-z0-9+/=]+"/g, '"signature": "{base64 of the minisign text}"')
    .replace(/\\n(RU[A-Za-z0-9+/=]{98})\\n/g, "\\n{minisign-signature}\\n")
    .replace(/\\n[A-Za-z0-9+/=]{88}\\n"/g, '\\n{minisign-global-signature}\\n"');
}

function golden(name: string, actual: string): void {
  const path = join(GOLDEN, name);
  // UPDATE_GOLDEN=1 rewrites the files; review the diff before committing. A missing file fails.
  if (process.env.UPDATE_GOLDEN === "1") writeFileSync(path, actual);
  expect(existsSync(path)).toBe(true);
  expect(actual).toBe(readFileSync(path, "utf8"));
}

const parser = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: "@_", cdataPropName: "#cdata", isArray: (n) => n === "item" });

describe("feed.xml (Sparkle / WinSparkle appcast)", () => {
  test("parses; every prefixed name is sparkle: or keyward:, bound to the exact namespace URIs", async () => {
    const res = await t.request("GET", "/api/v1/releases/acme-editor/feed.xml?platform=windows-x64&channel=beta");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/rss+xml; charset=utf-8");
    const doc = parser.parse(res.text);
    expect(doc.rss["@_version"]).toBe("2.0");
    expect(doc.rss["@_xmlns:sparkle"]).toBe(SPARKLE_NS);
    const prefixes = new Set<string>();
    const walk = (node: unknown): void => {
      if (Array.isArray(node)) return node.forEach(walk);
      if (node === null || typeof node !== "object") return;
      for (const [k, v] of Object.entries(node)) {
        const name = k.startsWith("@_") ? k.slice(2) : k;
        if (name.startsWith("xmlns:")) {
          // The only namespace declarations are Sparkle's and Keyward's, on <rss>.
          expect([["xmlns:sparkle", SPARKLE_NS], ["xmlns:keyward", KEYWARD_NS]]).toContainEqual([name, v]);
        } else if (name.includes(":") && name !== "?xml") {
          prefixes.add(name.split(":")[0]!);
        }
        walk(v);
      }
    };
    walk(doc);
    expect([...prefixes].sort()).toEqual(["keyward", "sparkle"]);
    expect(doc.rss["@_xmlns:keyward"]).toBe(KEYWARD_NS);
    const items = doc.rss.channel.item;
    expect(items.map((i: Record<string, string>) => i["sparkle:shortVersionString"])).toEqual(["1.2.0-beta.1", "1.1.0", "1.0.0"]);
    // Sparkle drops text after "-": sparkle:version is MAJOR.MINOR.PATCH.
    expect(items.map((i: Record<string, string>) => i["sparkle:version"])).toEqual(["1.2.0", "1.1.0", "1.0.0"]);
    expect(items[0]["sparkle:channel"]).toBe("beta");
    expect(items[1]["sparkle:channel"]).toBeUndefined();
    expect(items[1]["sparkle:minimumSystemVersion"]).toBe("10.0.17763");
    expect(items[1].pubDate).toBe("Tue, 10 Nov 2026 12:30:00 +0000");
    // The floor is 1.1.0: releases at/above it are critical for hosts below it; 1.0.0 is not.
    expect(items[0]["sparkle:criticalUpdate"]).toEqual({ "@_sparkle:version": "1.1.0" });
    expect(items[1]["sparkle:criticalUpdate"]).toEqual({ "@_sparkle:version": "1.1.0" });
    expect(items[2]["sparkle:criticalUpdate"]).toBeUndefined();
    // CDATA round-trips notes, even one containing "]]>".
    expect([items[1].description["#cdata"]].flat().join("")).toBe("<p>Fixes &amp; speed</p> and a literal ]]> in the notes");
    for (const i of items) {
      expect(i.enclosure["@_sparkle:os"]).toBe("windows-x64");
      expect(i.enclosure["@_type"]).toBe("application/octet-stream");
      expect(i.enclosure["@_url"]).toMatch(/^http:\/\/127\.0\.0\.1:0\/api\/v1\/releases\/acme-editor\/download\/[0-9a-f-]{36}$/);
    }
  });

  test("the enclosure's edSignature verifies with node:crypto against the exported Sparkle key, over the served bytes", async () => {
    const res = await t.request("GET", "/api/v1/releases/acme-editor/feed.xml?platform=darwin-arm64");
    const items = parser.parse(res.text).rss.channel.item;
    expect(items).toHaveLength(2);
    const raw = Buffer.from(keys.sparkle_public_key, "base64");
    expect(raw.length).toBe(32);
    const publicKey = createPublicKey({ key: Buffer.concat([Buffer.from("302a300506032b6570032100", "hex"), raw]), format: "der", type: "spki" });
    for (const item of items) {
      expect(item.enclosure["@_sparkle:os"]).toBeUndefined();
      const redirect = await t.request("GET", new URL(item.enclosure["@_url"]).pathname);
      expect(redirect.status).toBe(302);
      const served = await getObject(t, redirect.headers.get("location")!);
      expect(served.status).toBe(200);
      expect(served.bytes).toEqual(bytesOf(item["sparkle:shortVersionString"], "darwin-arm64"));
      expect(Number(item.enclosure["@_length"])).toBe(served.bytes.length);
      const signature = Buffer.from(item.enclosure["@_sparkle:edSignature"], "base64");
      expect(signature.length).toBe(64);
      expect(await verify(null, served.bytes, publicKey, signature)).toBe(true);
      // And not over other bytes.
      expect(await verify(null, Buffer.concat([served.bytes, Buffer.from("x")]), publicKey, signature)).toBe(false);
    }
  });

  test("golden: windows-x64 beta appcast", async () => {
    const res = await t.request("GET", "/api/v1/releases/acme-editor/feed.xml?platform=windows-x64&channel=beta");
    golden("appcast-windows-x64-beta.xml", normalize(res.text));
  });

  toolTest("xmllint")("the served appcast and the golden file are well-formed for the real xmllint", async () => {
    const res = await t.request("GET", "/api/v1/releases/acme-editor/feed.xml?platform=windows-x64&channel=beta");
    for (const xml of [res.text, readFileSync(join(GOLDEN, "appcast-windows-x64-beta.xml"), "utf8")]) {
      const check = xmllintCheck(xml);
      if (!check.ok) throw new Error(`xmllint: ${check.stderr}`);
    }
  });
});

describe("upgrade.json (Tauri)", () => {
  toolTest("minisign")("signature = base64 of the minisign text; the real minisign -V verifies the served artifact with the exported key", async () => {
    const res = await t.request("GET", "/api/v1/releases/acme-editor/upgrade.json?platform=darwin-arm64");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toStartWith("application/json");
    expect(Object.keys(res.body).sort()).toEqual(["minimum_supported_message", "minimum_supported_version", "notes", "pub_date", "signature", "url", "version"]);
    expect(res.body.version).toBe("1.1.0");
    expect(res.body.pub_date).toBe("2026-11-10T12:30:00.000Z");
    const text = Buffer.from(res.body.signature, "base64").toString("utf8");
    expect(Buffer.from(text, "utf8").toString("base64")).toBe(res.body.signature); // STANDARD, padded, one line
    const lines = text.split("\n");
    expect(lines).toHaveLength(5);
    expect(lines[4]).toBe("");
    expect(lines[2]).toBe(`trusted comment: timestamp:${Date.parse("2026-11-10T12:30:00Z") / 1000}\tfile:App-darwin-arm64.zip\tversion:1.1.0`);
    // Tauri's pubkey is base64 of the minisign public key file text.
    expect(Buffer.from(keys.tauri_public_key, "base64").toString("utf8")).toBe(keys.minisign_public_key);

    const redirect = await t.request("GET", new URL(res.body.url).pathname);
    expect(redirect.status).toBe(302);
    const served = await getObject(t, redirect.headers.get("location")!);
    expect(served.bytes).toEqual(bytesOf("1.1.0", "darwin-arm64"));

    const dir = mkdtempSync(join(tmpdir(), "keyward-minisign-"));
    try {
      writeFileSync(join(dir, "key.pub"), keys.minisign_public_key);
      writeFileSync(join(dir, "App.zip"), served.bytes);
      writeFileSync(join(dir, "App.zip.minisig"), text);
      const run = (file: string) => {
        const p = Bun.spawnSync(["minisign", "-V", "-p", join(dir, "key.pub"), "-m", join(dir, file), "-x", join(dir, "App.zip.minisig")]);
        return { code: p.exitCode, out: p.stdout.toString() + p.stderr.toString() };
      };
      const good = run("App.zip");
      expect(good.out).toContain("Signature and comment signature verified");
      expect(good.code).toBe(0);
      // The same signature must reject other bytes.
      writeFileSync(join(dir, "Other.zip"), bytesOf("1.0.0", "darwin-arm64"));
      expect(run("Other.zip").code).not.toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("Tauri {{target}}-{{arch}} platform names; current_version not older → 204", async () => {
    const res = await t.request("GET", "/api/v1/releases/acme-editor/upgrade.json?platform=windows-aarch64&channel=beta");
    expect(res.status).toBe(200);
    expect(res.body.version).toBe("1.2.0-beta.1");
    const older = await t.request("GET", "/api/v1/releases/acme-editor/upgrade.json?platform=darwin-aarch64&current_version=1.0.0");
    expect(older.body.version).toBe("1.1.0");
    const same = await t.request("GET", "/api/v1/releases/acme-editor/upgrade.json?platform=darwin-aarch64&current_version=1.1.0");
    expect(same.status).toBe(204);
  });

  test("golden: darwin-arm64 manifest", async () => {
    const res = await t.request("GET", "/api/v1/releases/acme-editor/upgrade.json?platform=darwin-arm64");
    golden("upgrade-darwin-arm64.json", normalize(JSON.stringify(res.body, null, 2) + "\n"));
  });

  test("floor fields appear only when the product sets them", async () => {
    const bare = await makeProduct(t.deps, { slug: "bare" });
    await publishRelease(t, bare.id, "0.1.0", { platforms: ["linux-x64"] });
    const res = await t.request("GET", "/api/v1/releases/bare/upgrade.json?platform=linux-x64");
    expect(Object.keys(res.body).sort()).toEqual(["notes", "pub_date", "signature", "url", "version"]);
  });
});

describe("feed.json", () => {
  test("entries carry every documented field", async () => {
    const res = await t.request("GET", "/api/v1/releases/acme-editor/feed.json?platform=windows-arm64&channel=beta");
    expect(res.status).toBe(200);
    expect(res.body.map((e: { version: string; critical: boolean }) => [e.version, e.critical])).toEqual([
      ["1.2.0-beta.1", true],
      ["1.1.0", true],
      ["1.0.0", false],
    ]);
    const e = res.body[1];
    expect(e).toMatchObject({
      channel: "stable",
      pub_date: "2026-11-10T12:30:00.000Z",
      minimum_os_version: "10.0.17763",
      platform: "windows-arm64",
      filename: "App-windows-arm64.zip",
      content_type: "application/zip",
      size: bytesOf("1.1.0", "windows-arm64").length,
      sha256: new Bun.CryptoHasher("sha256").update(bytesOf("1.1.0", "windows-arm64")).digest("hex"),
      signing_kid: keys.kid,
      minimum_supported_version: "1.1.0",
      minimum_supported_message: "Versions before 1.1.0 are no longer supported.",
    });
    expect(e.minisign_signature).toStartWith("untrusted comment: ");
    golden("feed-windows-arm64-beta.json", normalize(JSON.stringify(res.body, null, 2) + "\n"));
  });
});

// Spec "Update feeds": feeds embed the product's minimum supported version. Each format carries the
// floor and its message, with the same values (docs/updates.md, "The supported-version floor").
describe("the supported-version floor in every feed", () => {
  /** A Keyward channel element's text, found by namespace URI (not by prefix), as xmllint sees it. */
  const keyward = (xml: string, local: string) => {
    const path = `/rss/channel/*[local-name()='${local}' and namespace-uri()='${KEYWARD_NS}']`;
    return {
      count: Number(xmllintXPath(xml, `count(${path})`).stdout.trim()),
      text: xmllintXPath(xml, `string(${path})`).stdout.replace(/\n$/, ""),
    };
  };

  toolTest("xmllint")("feed.xml: keyward:minimumSupportedVersion and keyward:minimumSupportedMessage on the channel, equal to feed.json and upgrade.json", async () => {
    const xml = (await t.request("GET", "/api/v1/releases/acme-editor/feed.xml?platform=darwin-arm64")).text;
    const check = xmllintCheck(xml);
    if (!check.ok) throw new Error(`xmllint: ${check.stderr}`);
    expect(keyward(xml, "minimumSupportedVersion")).toEqual({ count: 1, text: "1.1.0" });
    expect(keyward(xml, "minimumSupportedMessage")).toEqual({ count: 1, text: "Versions before 1.1.0 are no longer supported." });
    // Sparkle's own semantics stay: criticalUpdate scoped to hosts below the floor.
    expect(xmllintXPath(xml, `count(//item/*[local-name()='criticalUpdate' and namespace-uri()='${SPARKLE_NS}'])`).stdout.trim()).toBe("1");

    const json = (await t.request("GET", "/api/v1/releases/acme-editor/feed.json?platform=darwin-arm64")).body;
    const upgrade = (await t.request("GET", "/api/v1/releases/acme-editor/upgrade.json?platform=darwin-arm64")).body;
    for (const entry of json) {
      expect(entry.minimum_supported_version).toBe(product.minimumSupportedVersion);
      expect(entry.minimum_supported_message).toBe(product.minimumSupportedMessage);
    }
    expect(upgrade.minimum_supported_version).toBe(product.minimumSupportedVersion);
    expect(upgrade.minimum_supported_message).toBe(product.minimumSupportedMessage);
  });

  toolTest("xmllint")("the appcast carries the floor even when it lists no item", async () => {
    const xml = (await t.request("GET", "/api/v1/releases/acme-editor/feed.xml?platform=linux-x64")).text;
    expect(xmllintCheck(xml).ok).toBe(true);
    expect(xmllintXPath(xml, "count(/rss/channel/item)").stdout.trim()).toBe("0");
    expect(keyward(xml, "minimumSupportedVersion").text).toBe("1.1.0");
    expect(keyward(xml, "minimumSupportedMessage").text).toBe("Versions before 1.1.0 are no longer supported.");
  });

  toolTest("xmllint")("no floor: no Keyward element, null in feed.json, absent from upgrade.json; a floor set later shows in all three", async () => {
    const p = await makeProduct(t.deps, { slug: "no-floor" });
    await publishRelease(t, p.id, "2.0.0", { platforms: ["linux-x64"] });
    const get = async () => ({
      xml: (await t.request("GET", "/api/v1/releases/no-floor/feed.xml?platform=linux-x64")).text,
      json: (await t.request("GET", "/api/v1/releases/no-floor/feed.json?platform=linux-x64")).body,
      upgrade: (await t.request("GET", "/api/v1/releases/no-floor/upgrade.json?platform=linux-x64")).body,
    });
    const before = await get();
    expect(xmllintCheck(before.xml).ok).toBe(true);
    expect(keyward(before.xml, "minimumSupportedVersion").count).toBe(0);
    expect(keyward(before.xml, "minimumSupportedMessage").count).toBe(0);
    expect(before.json[0]).toMatchObject({ minimum_supported_version: null, minimum_supported_message: null });
    expect(before.upgrade).not.toContainKey("minimum_supported_version");
    expect(before.upgrade).not.toContainKey("minimum_supported_message");

    const patch = await t.request("PATCH", `/api/v1/admin/products/${p.id}`, {
      body: { minimum_supported_version: "2.0.0", minimum_supported_message: "Update to 2.0 & later <now>." },
    });
    expect(patch.status).toBe(200);
    const after = await get();
    expect(xmllintCheck(after.xml).ok).toBe(true);
    expect(keyward(after.xml, "minimumSupportedVersion").text).toBe("2.0.0");
    expect(keyward(after.xml, "minimumSupportedMessage").text).toBe("Update to 2.0 & later <now>.");
    expect(after.json[0]).toMatchObject({ minimum_supported_version: "2.0.0", minimum_supported_message: "Update to 2.0 & later <now>." });
    expect(after.upgrade).toMatchObject({ minimum_supported_version: "2.0.0", minimum_supported_message: "Update to 2.0 & later <now>." });
  });
});
