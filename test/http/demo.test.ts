import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { createTestApp, type TestApp } from "../support/app";
import { describeDemo, loadDemo, type DemoSummary } from "../../src/demo";

let t: TestApp;
let first: DemoSummary;
beforeAll(async () => {
  t = await createTestApp();
  first = await loadDemo(t.deps);
});
afterAll(() => t.close());

describe("keyward demo", () => {
  test("creates a product with three licenses and an admin key that works", async () => {
    expect(first.created).toBe(true);
    expect(first.licenses.map((l) => l.plan)).toEqual(["Pro", "Trial", "Floating (2 seats)"]);
    for (const l of first.licenses) expect(l.key).toMatch(/^KW(-[A-Z2-9]{8}){4}$/);
    const res = await t.request("GET", "/api/v1/admin/products", { key: first.adminApiKey });
    expect(res.status).toBe(200);
    expect(res.body.data.items.map((p: { slug: string }) => p.slug)).toContain("demo-app");
  });

  test("its releases are published, signed and served by the feeds", async () => {
    const stable = await t.request("GET", "/api/v1/releases/demo-app/feed.json?platform=linux-x64");
    expect(stable.status).toBe(200);
    expect(stable.body.map((e: { version: string }) => e.version)).toEqual(["1.1.0", "1.0.0"]);
    const beta = await t.request("GET", "/api/v1/releases/demo-app/feed.json?platform=linux-x64&channel=beta");
    expect(beta.body[0].version).toBe("1.2.0-beta.1");
    const upgrade = await t.request("GET", "/api/v1/releases/demo-app/upgrade.json?platform=windows-x64");
    expect(upgrade.status).toBe(200);
    expect(Buffer.from(upgrade.body.signature, "base64").toString()).toContain("version:1.1.0");
  });

  test("the Pro license downloads the newest stable build, whose bytes match the announced sha256", async () => {
    const pro = first.licenses[0]!;
    const res = await t.request("POST", "/api/v1/license/download", { body: { license_key: pro.key, platform: "linux-x64" } });
    expect(res.status).toBe(200);
    expect(res.body.data.version).toBe("1.1.0");
    const key = decodeURIComponent(new URL(res.body.data.url).pathname.replace("/api/v1/storage/objects/", ""));
    const bytes = new Uint8Array(await new Response(await t.deps.storage.read(key)).arrayBuffer());
    expect(createHash("sha256").update(bytes).digest("hex")).toBe(res.body.data.sha256);
  });

  test("running it again changes nothing and reports the same licenses", async () => {
    const again = await loadDemo(t.deps);
    expect(again.created).toBe(false);
    expect(again.adminApiKey).toBeNull();
    expect(again.licenses).toEqual(first.licenses);
    const products = await t.request("GET", "/api/v1/admin/products");
    expect(products.body.data.items.filter((p: { slug: string }) => p.slug === "demo-app")).toHaveLength(1);
    expect(describeDemo(again, "http://127.0.0.1:8080")).toContain("already loaded");
  });
});
