// Rendered feeds are cached per (product, release generation). These tests prove
// a cached feed never outlives a change: publish, yank, unyank, a product edit, and a publish made by
// another node on the same database.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { createTestApp, type TestApp } from "../../support/app";
import { makeProduct } from "../../support/factories";
import { SYSTEM_ACTOR } from "../../../src/shared/actor";
import { addArtifact, createRelease, finalizeArtifact, publishRelease, unyankRelease, yankRelease } from "../../../src/modules/releases/service";
import { updateProduct } from "../../../src/modules/products/service";
import type { Product } from "../../../src/modules/products/repo";

const masterKey = randomBytes(32).toString("hex");
let a: TestApp; // serves the feeds
let b: TestApp; // another node on the same database
let product: Product;

async function publish(t: TestApp, version: string) {
  const r = await createRelease(t.deps, SYSTEM_ACTOR, product.id, { version });
  const { artifact } = await addArtifact(t.deps, SYSTEM_ACTOR, r.id, {
    platform: "linux-x64",
    filename: `app-${version}.bin`,
    contentType: "application/octet-stream",
    size: 3,
  });
  await t.deps.storage.put(artifact.storageKey, new Uint8Array([1, 2, 3]), "application/octet-stream");
  await finalizeArtifact(t.deps, SYSTEM_ACTOR, artifact.id);
  return await publishRelease(t.deps, SYSTEM_ACTOR, r.id);
}

const versions = async (format: "feed.json" | "feed.xml" = "feed.json") => {
  const res = await a.request("GET", `/api/v1/releases/${product.slug}/${format}?platform=linux-x64`);
  expect(res.status).toBe(200);
  return format === "feed.json"
    ? (res.body as { version: string }[]).map((e) => e.version)
    : [...res.text.matchAll(/<sparkle:shortVersionString>([^<]+)</g)].map((m) => m[1]);
};

beforeAll(async () => {
  a = await createTestApp({ env: { RELEASE_KEY_ENCRYPTION_KEY: masterKey } });
  b = await createTestApp({ sameDatabaseAs: a, clock: a.clock, env: { RELEASE_KEY_ENCRYPTION_KEY: masterKey } });
  product = await makeProduct(a.deps);
  await publish(a, "1.0.0");
});
afterAll(async () => {
  await b.deps.db.close();
  await a.close();
});

describe("feed cache", () => {
  test("a repeated request is served identically", async () => {
    const first = await a.request("GET", `/api/v1/releases/${product.slug}/feed.xml?platform=linux-x64`);
    const second = await a.request("GET", `/api/v1/releases/${product.slug}/feed.xml?platform=linux-x64`);
    expect(second.text).toBe(first.text);
    expect(second.headers.get("content-type")).toContain("application/rss+xml");
  });

  test("a publish shows at once in both formats", async () => {
    expect(await versions()).toEqual(["1.0.0"]);
    expect(await versions("feed.xml")).toEqual(["1.0.0"]);
    await publish(a, "1.1.0");
    expect(await versions()).toEqual(["1.1.0", "1.0.0"]);
    expect(await versions("feed.xml")).toEqual(["1.1.0", "1.0.0"]);
  });

  test("a yank withdraws at once, an unyank brings it back", async () => {
    const r = (await publish(a, "1.2.0")).id;
    expect((await versions())[0]).toBe("1.2.0");
    await yankRelease(a.deps, SYSTEM_ACTOR, r, "broken");
    expect(await versions()).toEqual(["1.1.0", "1.0.0"]);
    await unyankRelease(a.deps, SYSTEM_ACTOR, r);
    expect((await versions())[0]).toBe("1.2.0");
  });

  test("a product edit (the supported-version floor) shows at once", async () => {
    const before = await a.request("GET", `/api/v1/releases/${product.slug}/feed.xml?platform=linux-x64`);
    expect(before.text).not.toContain("criticalUpdate");
    // Same millisecond as the last change: the generation, not a timestamp, must invalidate.
    await updateProduct(a.deps, SYSTEM_ACTOR, product.id, { minimumSupportedVersion: "1.1.0" });
    const after = await a.request("GET", `/api/v1/releases/${product.slug}/feed.xml?platform=linux-x64`);
    expect(after.text).toContain('sparkle:criticalUpdate sparkle:version="1.1.0"');
  });

  test("a publish by another node on the same database shows at once", async () => {
    const warm = await versions();
    await publish(b, "2.0.0");
    expect(await versions()).toEqual(["2.0.0", ...warm]);
  });
});
