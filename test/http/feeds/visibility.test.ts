// Spec "Release": a release is invisible until fully uploaded and published; a yanked release is
// withdrawn at once; an explicitly requested yanked version → 410 RELEASE_YANKED. Plus the feeds'
// query validation (400 in the envelope) and unknown slugs (404).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createTestApp, type TestApp } from "../../support/app";
import { makeLicense, makePlan, makeProduct } from "../../support/factories";
import type { Product } from "../../../src/modules/products/repo";
import { addUploadedArtifact, createDraft, publishRelease } from "../releases/support";

let t: TestApp;
let product: Product;
let key: string;
const ids: Record<string, { release: string; artifact: string }> = {};

beforeAll(async () => {
  t = await createTestApp();
  product = await makeProduct(t.deps, { slug: "vis" });
  key = (await makeLicense(t.deps, { productId: product.id, planId: (await makePlan(t.deps, product.id)).id })).key;
  const stable = await publishRelease(t, product.id, "1.0.0", { platforms: ["linux-x64"] });
  ids.stable = { release: stable.id, artifact: stable.artifacts[0].id };

  // Newer but yanked.
  const yanked = await publishRelease(t, product.id, "1.5.0", { platforms: ["linux-x64"] });
  expect((await t.request("POST", `/api/v1/admin/releases/${yanked.id}/yank`, { body: { reason: "broken" } })).status).toBe(200);
  ids.yanked = { release: yanked.id, artifact: yanked.artifacts[0].id };

  // Newer still, fully uploaded and finalized, never published.
  const draft = await createDraft(t, product.id, { version: "2.0.0" });
  const a = await addUploadedArtifact(t, draft.id, "linux-x64", "draft bytes");
  ids.draft = { release: draft.id, artifact: a.id };

  // Newest, half uploaded: the object is there but the artifact was never finalized.
  const half = await createDraft(t, product.id, { version: "3.0.0" });
  const h = await addUploadedArtifact(t, half.id, "linux-x64", "half bytes", { finalize: false });
  ids.half = { release: half.id, artifact: h.id };
});
afterAll(() => t.close());

describe("drafts, half-uploaded and yanked releases are invisible", () => {
  test("feed.json / feed.xml list only the published, unyanked release", async () => {
    const json = await t.request("GET", "/api/v1/releases/vis/feed.json?platform=linux-x64&channel=dev");
    expect(json.body.map((e: { version: string }) => e.version)).toEqual(["1.0.0"]);
    const xml = await t.request("GET", "/api/v1/releases/vis/feed.xml?platform=linux-x64&channel=dev");
    expect(xml.text).toContain("<sparkle:shortVersionString>1.0.0</sparkle:shortVersionString>");
    for (const v of ["1.5.0", "2.0.0", "3.0.0"]) expect(xml.text).not.toContain(`>${v}<`);
  });

  test("upgrade.json offers the published release", async () => {
    const res = await t.request("GET", "/api/v1/releases/vis/upgrade.json?platform=linux-x64&channel=dev");
    expect(res.body.version).toBe("1.0.0");
  });

  test("POST /license/download: latest is 1.0.0; pinned draft/half → 404; pinned yanked → 410", async () => {
    const latest = await t.request("POST", "/api/v1/license/download", { body: { license_key: key, platform: "linux-x64", channel: "dev" } });
    expect(latest.body.data.version).toBe("1.0.0");
    for (const version of ["2.0.0", "3.0.0", "9.9.9"]) {
      const res = await t.request("POST", "/api/v1/license/download", { body: { license_key: key, platform: "linux-x64", version } });
      expect([version, res.status, res.body.error.code]).toEqual([version, 404, "RELEASE_NOT_FOUND"]);
    }
    const y = await t.request("POST", "/api/v1/license/download", { body: { license_key: key, platform: "linux-x64", version: "1.5.0" } });
    expect(y.status).toBe(410);
    expect(y.body.error.code).toBe("RELEASE_YANKED");
    const empty = await t.request("POST", "/api/v1/license/download", { body: { license_key: key, platform: "linux-x64", version: "" } });
    expect(empty.body.data.version).toBe("1.0.0");
  });

  test("stable download URLs: draft/half → 404, yanked → 410, published → 302", async () => {
    for (const name of ["draft", "half"]) {
      const res = await t.request("GET", `/api/v1/releases/vis/download/${ids[name]!.artifact}`);
      expect([name, res.status, res.body.error.code]).toEqual([name, 404, "RELEASE_NOT_FOUND"]);
    }
    const y = await t.request("GET", `/api/v1/releases/vis/download/${ids.yanked!.artifact}`);
    expect(y.status).toBe(410);
    expect(y.body.error.code).toBe("RELEASE_YANKED");
    const ok = await t.request("GET", `/api/v1/releases/vis/download/${ids.stable!.artifact}`);
    expect(ok.status).toBe(302);
    expect(ok.headers.get("cache-control")).toBe("no-store");
  });

  test("an artifact is only reachable under its own product's slug", async () => {
    await makeProduct(t.deps, { slug: "other" });
    const res = await t.request("GET", `/api/v1/releases/other/download/${ids.stable!.artifact}`);
    expect(res.status).toBe(404);
  });

  test("unyank brings it back at once", async () => {
    expect((await t.request("POST", `/api/v1/admin/releases/${ids.yanked!.release}/unyank`)).status).toBe(200);
    const json = await t.request("GET", "/api/v1/releases/vis/feed.json?platform=linux-x64");
    expect(json.body.map((e: { version: string }) => e.version)).toEqual(["1.5.0", "1.0.0"]);
    expect((await t.request("POST", `/api/v1/admin/releases/${ids.yanked!.release}/yank`, { body: { reason: "again" } })).status).toBe(200);
    const after = await t.request("GET", "/api/v1/releases/vis/feed.json?platform=linux-x64");
    expect(after.body.map((e: { version: string }) => e.version)).toEqual(["1.0.0"]);
  });
});

describe("validation and unknown products", () => {
  const BAD = [
    "platform=",
    "",
    "platform=windows-x86",
    "platform=darwin-aarch64", // Tauri names are accepted by upgrade.json only
    "platform=linux-x64&channel=nightly",
    "platform=linux-x64&limit=0",
    "platform=linux-x64&limit=101",
    "platform=linux-x64&limit=abc",
    "platform=linux-x64&limit=1.5",
  ];
  for (const format of ["feed.xml", "feed.json"]) {
    for (const q of BAD) {
      test(`${format}?${q} → 400 VALIDATION_ERROR in the envelope`, async () => {
        const res = await t.request("GET", `/api/v1/releases/vis/${format}?${q}`);
        expect(res.status).toBe(400);
        expect(res.headers.get("content-type")).toStartWith("application/json");
        expect(res.body).toMatchObject({ success: false, error: { code: "VALIDATION_ERROR" } });
      });
    }
    test(`${format}: limit bounds 1 and 100 are accepted`, async () => {
      for (const limit of [1, 100]) expect((await t.request("GET", `/api/v1/releases/vis/${format}?platform=linux-x64&limit=${limit}`)).status).toBe(200);
    });
    test(`${format}: unknown slug → 404 NOT_FOUND`, async () => {
      const res = await t.request("GET", `/api/v1/releases/nope/${format}?platform=linux-x64`);
      expect(res.status).toBe(404);
      expect(res.body).toMatchObject({ success: false, error: { code: "NOT_FOUND" } });
    });
  }
  // Sparkle appends its system profile (SUEnableSystemProfiling: appName, osVersion, cputype, …) and
  // the delegate's feedParameters to the feed URL. A 400 for them would make every update check of
  // such an app fail; only the parameters the spec names are validated.
  test("unknown query parameters (Sparkle's system profile) are ignored by every feed", async () => {
    const extra = "appName=Acme&appVersion=1.0.0&osVersion=14.5&cputype=16777228&lang=en&bundleID=com.acme";
    for (const format of ["feed.xml", "feed.json", "upgrade.json"]) {
      const res = await t.request("GET", `/api/v1/releases/vis/${format}?platform=linux-x64&${extra}`);
      expect([format, res.status]).toEqual([format, 200]);
    }
    const bad = await t.request("GET", `/api/v1/releases/vis/feed.xml?platform=linux-x64&limit=0&${extra}`);
    expect(bad.status).toBe(400);
  });
  test("upgrade.json: bad platform/channel/current_version → 400; unknown slug → 404; nothing published → 204", async () => {
    for (const q of ["", "platform=x", "platform=linux-x64&channel=x", "platform=linux-x64&current_version=1.0"]) {
      const res = await t.request("GET", `/api/v1/releases/vis/upgrade.json?${q}`);
      expect([q, res.status, res.body.error?.code]).toEqual([q, 400, "VALIDATION_ERROR"]);
    }
    expect((await t.request("GET", "/api/v1/releases/nope/upgrade.json?platform=linux-x64")).status).toBe(404);
    await makeProduct(t.deps, { slug: "empty" });
    const none = await t.request("GET", "/api/v1/releases/empty/upgrade.json?platform=linux-x64");
    expect(none.status).toBe(204);
    expect(none.text).toBe("");
  });
  test("download redirect: unknown slug → 404, malformed artifact id → 400, unknown artifact → 404", async () => {
    expect((await t.request("GET", `/api/v1/releases/nope/download/${ids.stable!.artifact}`)).status).toBe(404);
    expect((await t.request("GET", "/api/v1/releases/vis/download/not-a-uuid")).status).toBe(400);
    const res = await t.request("GET", `/api/v1/releases/vis/download/${crypto.randomUUID()}`);
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe("RELEASE_NOT_FOUND");
  });
});

test("the feed routes are in the OpenAPI document (paths with a dot are not static files)", async () => {
  const res = await t.request("GET", "/api/v1/openapi.json");
  for (const p of ["feed.xml", "feed.json", "upgrade.json"]) expect(res.body.paths[`/api/v1/releases/{slug}/${p}`]?.get).toBeDefined();
  expect(res.body.paths["/api/v1/releases/{slug}/download/{artifact_id}"]?.get).toBeDefined();
});
