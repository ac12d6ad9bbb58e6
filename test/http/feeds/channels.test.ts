// Channel fallback (DECISIONS: stable → [stable]; beta → [beta, stable]; alpha → [alpha, beta,
// stable]; dev → [dev, alpha, beta, stable]), ordered by semver, for every feed format and for
// POST /license/download, from one table.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { XMLParser } from "fast-xml-parser";
import { createTestApp, type TestApp } from "../../support/app";
import { makeLicense, makePlan, makeProduct } from "../../support/factories";
import { HOUR } from "../../../src/shared/clock";
import type { Product } from "../../../src/modules/products/repo";
import type { Channel, Platform } from "../../../src/modules/releases/repo";
import { publishRelease } from "../releases/support";

let t: TestApp;
let product: Product;
let licenseKey: string;

// Published in this order (a later publish may carry a lower version: order must be by semver).
const RELEASES: { version: string; channel: Channel; platforms: Platform[] }[] = [
  { version: "1.1.0", channel: "stable", platforms: ["darwin-arm64", "windows-x64"] },
  { version: "1.0.0", channel: "stable", platforms: ["darwin-arm64", "windows-x64", "linux-x64"] },
  { version: "1.1.0-beta.1", channel: "beta", platforms: ["darwin-arm64", "windows-x64", "linux-x64"] },
  { version: "1.2.0-beta.1", channel: "beta", platforms: ["darwin-arm64", "windows-x64", "linux-x64"] },
  { version: "1.2.0-alpha.1", channel: "alpha", platforms: ["darwin-arm64", "windows-x64"] },
  { version: "1.3.0-dev.1", channel: "dev", platforms: ["darwin-arm64", "linux-x64"] },
];

// Expected feed content per (channel, platform), newest first. linux-x64 shows that a release
// without an artifact for the platform is skipped, not announced.
const TABLE: { channel: Channel; platform: Platform; versions: string[] }[] = [
  { channel: "stable", platform: "darwin-arm64", versions: ["1.1.0", "1.0.0"] },
  { channel: "beta", platform: "darwin-arm64", versions: ["1.2.0-beta.1", "1.1.0", "1.1.0-beta.1", "1.0.0"] },
  { channel: "alpha", platform: "darwin-arm64", versions: ["1.2.0-beta.1", "1.2.0-alpha.1", "1.1.0", "1.1.0-beta.1", "1.0.0"] },
  { channel: "dev", platform: "darwin-arm64", versions: ["1.3.0-dev.1", "1.2.0-beta.1", "1.2.0-alpha.1", "1.1.0", "1.1.0-beta.1", "1.0.0"] },
  { channel: "stable", platform: "linux-x64", versions: ["1.0.0"] },
  { channel: "beta", platform: "linux-x64", versions: ["1.2.0-beta.1", "1.1.0-beta.1", "1.0.0"] },
  { channel: "alpha", platform: "linux-x64", versions: ["1.2.0-beta.1", "1.1.0-beta.1", "1.0.0"] },
  { channel: "dev", platform: "linux-x64", versions: ["1.3.0-dev.1", "1.2.0-beta.1", "1.1.0-beta.1", "1.0.0"] },
  { channel: "stable", platform: "windows-x64", versions: ["1.1.0", "1.0.0"] },
  { channel: "dev", platform: "windows-x64", versions: ["1.2.0-beta.1", "1.2.0-alpha.1", "1.1.0", "1.1.0-beta.1", "1.0.0"] },
];

beforeAll(async () => {
  t = await createTestApp();
  product = await makeProduct(t.deps, { slug: "acme" });
  const plan = await makePlan(t.deps, product.id);
  licenseKey = (await makeLicense(t.deps, { productId: product.id, planId: plan.id })).key;
  for (const r of RELEASES) {
    t.clock.advance(HOUR);
    await publishRelease(t, product.id, r.version, { channel: r.channel, platforms: r.platforms });
  }
});
afterAll(() => t.close());

const xmlParser = new XMLParser({ ignoreAttributes: false, isArray: (name) => name === "item" });

describe.each(TABLE)("channel $channel on $platform", ({ channel, platform, versions }) => {
  const q = `platform=${platform}${channel === "stable" ? "" : `&channel=${channel}`}`;

  test("feed.json lists the chain newest first", async () => {
    const res = await t.request("GET", `/api/v1/releases/acme/feed.json?${q}`);
    expect(res.status).toBe(200);
    expect(res.body.map((e: { version: string }) => e.version)).toEqual(versions);
  });

  test("feed.xml lists the chain newest first", async () => {
    const res = await t.request("GET", `/api/v1/releases/acme/feed.xml?${q}`);
    expect(res.status).toBe(200);
    const items = xmlParser.parse(res.text).rss.channel.item ?? [];
    expect(items.map((i: Record<string, string>) => i["sparkle:shortVersionString"])).toEqual(versions);
  });

  test("upgrade.json offers the newest", async () => {
    const res = await t.request("GET", `/api/v1/releases/acme/upgrade.json?${q}`);
    expect(res.status).toBe(200);
    expect(res.body.version).toBe(versions[0]);
  });

  test("POST /license/download resolves the newest", async () => {
    const res = await t.request("POST", "/api/v1/license/download", {
      body: { license_key: licenseKey, platform, ...(channel === "stable" ? {} : { channel }) },
    });
    expect(res.status).toBe(200);
    expect(res.body.data.version).toBe(versions[0]);
    expect(res.body.data.platform).toBe(platform);
  });
});

test("limit caps the list from the newest end", async () => {
  const res = await t.request("GET", "/api/v1/releases/acme/feed.json?platform=darwin-arm64&channel=dev&limit=2");
  expect(res.body.map((e: { version: string }) => e.version)).toEqual(["1.3.0-dev.1", "1.2.0-beta.1"]);
});

test("a platform with no artifact at all: empty feeds, 204 manifest, 404 download", async () => {
  expect((await t.request("GET", "/api/v1/releases/acme/feed.json?platform=linux-armhf")).body).toEqual([]);
  const xml = await t.request("GET", "/api/v1/releases/acme/feed.xml?platform=linux-armhf");
  expect(xml.status).toBe(200);
  expect(xmlParser.parse(xml.text).rss.channel.item).toBeUndefined();
  const up = await t.request("GET", "/api/v1/releases/acme/upgrade.json?platform=linux-armhf");
  expect(up.status).toBe(204);
  expect(up.text).toBe("");
  const dl = await t.request("POST", "/api/v1/license/download", { body: { license_key: licenseKey, platform: "linux-armhf" } });
  expect(dl.status).toBe(404);
  expect(dl.body.error.code).toBe("RELEASE_NOT_FOUND");
});
