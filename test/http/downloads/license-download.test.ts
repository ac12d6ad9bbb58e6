// POST /license/download (spec rule 6) and the licensed feed redirect (DECISIONS: same gate).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { createTestApp, type TestApp } from "../../support/app";
import { makeLicense, makePlan, makeProduct } from "../../support/factories";
import { SYSTEM_ACTOR } from "../../../src/shared/actor";
import type { Plan } from "../../../src/modules/plans/repo";
import type { IssueLicenseInput } from "../../../src/modules/licenses/service";
import type { Product } from "../../../src/modules/products/repo";
import { getObject, publishRelease } from "../releases/support";
import { changeLicenseNow } from "../../support/license-change";

let t: TestApp;
let open: Product;
let licensed: Product;
let openPlan: Plan;
let licensedPlan: Plan;
const artifactOf: Record<string, string> = {}; // licensed product: version → linux-x64 artifact id

const NOW = "2026-11-21T08:00:00.000Z";
const PUBLISHED = { "1.0.0": "2026-01-01T00:00:00.000Z", "1.1.0": "2026-03-01T00:00:00.000Z", "2.0.0": "2026-06-01T00:00:00.000Z" } as const;
const bytesOf = (slug: string, v: string) => `${slug} ${v} linux build\n`;

beforeAll(async () => {
  t = await createTestApp();
  open = await makeProduct(t.deps, { slug: "dl-open" });
  licensed = await makeProduct(t.deps, { slug: "dl-licensed", distribution: "licensed" });
  openPlan = await makePlan(t.deps, open.id, { graceDays: 3 });
  licensedPlan = await makePlan(t.deps, licensed.id);
  for (const [version, at] of Object.entries(PUBLISHED)) {
    t.clock.set(at);
    await publishRelease(t, open.id, version, { platforms: ["linux-x64", "darwin-arm64"], bytes: () => bytesOf("dl-open", version) });
    const r = await publishRelease(t, licensed.id, version, { platforms: ["linux-x64"], bytes: () => bytesOf("dl-licensed", version) });
    artifactOf[version] = r.artifacts[0].id;
  }
  t.clock.set(NOW);
});
afterAll(() => t.close());

const license = async (product: Product, plan: Plan, over: Partial<IssueLicenseInput> = {}) =>
  await makeLicense(t.deps, { productId: product.id, planId: plan.id, ...over });
const download = (body: Record<string, unknown>) => t.request("POST", "/api/v1/license/download", { body });
const suspend = async (id: string) =>
  await changeLicenseNow(t.deps, id, () => ({ status: "suspended", priorStatus: "active" }), t.clock.now(), () => ({
    audit: {
      actor: SYSTEM_ACTOR,
      action: "license.suspend",
      entityType: "license",
      entityId: id,
      productId: null,
      changes: null,
      at: t.clock.now(),
    },
  }));

describe("POST /license/download", () => {
  test("latest: url, expires_at, version, platform, sha256, file_size; the URL serves exactly those bytes", async () => {
    const { key } = await license(open, openPlan);
    const res = await download({ license_key: key, platform: "linux-x64" });
    expect(res.status).toBe(200);
    const bytes = bytesOf("dl-open", "2.0.0");
    expect(res.body.data).toEqual({
      url: expect.stringMatching(/^http:\/\//),
      expires_at: "2026-11-21T08:05:00.000Z",
      version: "2.0.0",
      platform: "linux-x64",
      sha256: createHash("sha256").update(bytes).digest("hex"),
      file_size: bytes.length,
    });
    const got = await getObject(t, res.body.data.url);
    expect(got.status).toBe(200);
    expect(new TextDecoder().decode(got.bytes)).toBe(bytes);
  });

  test("keys are normalized (case, surrounding spaces)", async () => {
    const { key } = await license(open, openPlan);
    const res = await download({ license_key: `  ${key.toLowerCase()} `, platform: "darwin-arm64" });
    expect(res.status).toBe(200);
  });

  test("support cutoff: latest = newest published before support_until; pinned newer → 403 SUPPORT_EXPIRED; older pinned ok", async () => {
    // support_until falls exactly on 1.1.0's publish instant: strictly-before excludes 1.1.0.
    const { key } = await license(open, openPlan, { supportUntil: new Date(PUBLISHED["1.1.0"]) });
    expect((await download({ license_key: key, platform: "linux-x64" })).body.data.version).toBe("1.0.0");
    const { key: k2 } = await license(open, openPlan, { supportUntil: new Date("2026-04-01T00:00:00Z") });
    expect((await download({ license_key: k2, platform: "linux-x64" })).body.data.version).toBe("1.1.0");
    const pinned = await download({ license_key: k2, platform: "linux-x64", version: "2.0.0" });
    expect(pinned.status).toBe(403);
    expect(pinned.body.error.code).toBe("SUPPORT_EXPIRED");
    expect((await download({ license_key: k2, platform: "linux-x64", version: "1.0.0" })).body.data.version).toBe("1.0.0");
  });

  test("support ended before the first release: latest → 403 SUPPORT_EXPIRED", async () => {
    const { key } = await license(open, openPlan, { supportUntil: new Date("2025-12-01T00:00:00Z") });
    const res = await download({ license_key: key, platform: "linux-x64" });
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe("SUPPORT_EXPIRED");
  });

  test("no support_until: unrestricted, latest and pinned", async () => {
    const { key } = await license(open, openPlan);
    expect((await download({ license_key: key, platform: "linux-x64" })).body.data.version).toBe("2.0.0");
    expect((await download({ license_key: key, platform: "linux-x64", version: "2.0.0" })).body.data.version).toBe("2.0.0");
  });

  test("unknown key → 404 LICENSE_NOT_FOUND; unusable license → 403 LICENSE_INACTIVE; grace_days honored", async () => {
    const unknown = await download({ license_key: "KW-AAAAAAAA-BBBBBBBB-CCCCCCCC-DDDDDDDD", platform: "linux-x64" });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe("LICENSE_NOT_FOUND");

    const expired = await license(open, openPlan, { validUntil: new Date("2026-11-10T00:00:00Z") });
    const r1 = await download({ license_key: expired.key, platform: "linux-x64" });
    expect(r1.status).toBe(403);
    expect(r1.body.error.code).toBe("LICENSE_INACTIVE");

    // Expired 2 days ago, plan grace is 3 days: still usable.
    const inGrace = await license(open, openPlan, { validUntil: new Date("2026-11-19T08:00:00Z") });
    expect((await download({ license_key: inGrace.key, platform: "linux-x64" })).status).toBe(200);

    const suspended = await license(open, openPlan);
    await suspend(suspended.license.id);
    const r2 = await download({ license_key: suspended.key, platform: "linux-x64" });
    expect(r2.status).toBe(403);
    expect(r2.body.error.code).toBe("LICENSE_INACTIVE");
  });

  test("400: invalid platform, channel, version; missing key", async () => {
    const { key } = await license(open, openPlan);
    for (const body of [
      { license_key: key, platform: "linux-x86" },
      { license_key: key, platform: "linux-x64", channel: "nightly" },
      { license_key: key, platform: "linux-x64", version: "2.0" },
      { platform: "linux-x64" },
      { license_key: key },
    ]) {
      const res = await download(body);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe("VALIDATION_ERROR");
    }
  });

  test("a pinned version without an artifact for the platform → 404 RELEASE_NOT_FOUND", async () => {
    const { key } = await license(open, openPlan);
    const res = await download({ license_key: key, platform: "windows-x64", version: "1.0.0" });
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe("RELEASE_NOT_FOUND");
  });

  test("storage not configured → 503 STORAGE_DISABLED", async () => {
    const t2 = await createTestApp({ env: { STORAGE_DRIVER: "none" } });
    try {
      const p = await makeProduct(t2.deps);
      const { key } = await makeLicense(t2.deps, { productId: p.id, planId: (await makePlan(t2.deps, p.id)).id });
      const res = await t2.request("POST", "/api/v1/license/download", { body: { license_key: key, platform: "linux-x64" } });
      expect(res.status).toBe(503);
      expect(res.body.error.code).toBe("STORAGE_DISABLED");
    } finally {
      await t2.close();
    }
  });
});

describe("feed download redirect of a licensed product", () => {
  const path = (version: string) => `/api/v1/releases/dl-licensed/download/${artifactOf[version]}`;

  test("refuses a missing key (401), an unknown, foreign or unusable key (one 404 LICENSE_NOT_FOUND)", async () => {
    const none = await t.request("GET", path("2.0.0"));
    expect(none.status).toBe(401);
    expect(none.body.error.code).toBe("UNAUTHORIZED");

    const expired = await license(licensed, licensedPlan, { validUntil: new Date("2026-01-01T00:00:00Z") });
    const suspended = await license(licensed, licensedPlan);
    await suspend(suspended.license.id);
    const foreign = await license(open, openPlan);
    for (const [name, key] of [
      ["unknown", "KW-AAAAAAAA-BBBBBBBB-CCCCCCCC-DDDDDDDD"],
      ["expired", expired.key],
      ["suspended", suspended.key],
      ["other product", foreign.key],
    ] as const) {
      const res = await t.request("GET", `${path("2.0.0")}?license_key=${key}`);
      expect([name, res.status, res.body.error.code]).toEqual([name, 404, "LICENSE_NOT_FOUND"]);
    }
  });

  test("a usable key → 302 to bytes, by query or Authorization: License", async () => {
    const { key } = await license(licensed, licensedPlan);
    const q = await t.request("GET", `${path("2.0.0")}?license_key=${key}`);
    expect(q.status).toBe(302);
    const got = await getObject(t, q.headers.get("location")!);
    expect(new TextDecoder().decode(got.bytes)).toBe(bytesOf("dl-licensed", "2.0.0"));
    const h = await t.request("GET", path("1.0.0"), { headers: { authorization: `License ${key}` } });
    expect(h.status).toBe(302);
  });

  test("applies the support cutoff like /license/download", async () => {
    const { key } = await license(licensed, licensedPlan, { supportUntil: new Date("2026-04-01T00:00:00Z") });
    const newer = await t.request("GET", `${path("2.0.0")}?license_key=${key}`);
    expect(newer.status).toBe(403);
    expect(newer.body.error.code).toBe("SUPPORT_EXPIRED");
    expect((await t.request("GET", `${path("1.1.0")}?license_key=${key}`)).status).toBe(302);
  });

  test("open products redirect without a key", async () => {
    const feed = await t.request("GET", "/api/v1/releases/dl-open/feed.json?platform=linux-x64");
    const res = await t.request("GET", new URL(feed.body[0].url).pathname);
    expect(res.status).toBe(302);
  });

  test("a licensed feed requested with license_key carries it into its download URLs; an open feed never does", async () => {
    const { key } = await license(licensed, licensedPlan);
    const lic = await t.request("GET", `/api/v1/releases/dl-licensed/feed.json?platform=linux-x64&license_key=${key}`);
    expect(new URL(lic.body[0].url).searchParams.get("license_key")).toBe(key);
    const up = await t.request("GET", `/api/v1/releases/dl-licensed/upgrade.json?platform=linux-x64&license_key=${key}`);
    const res = await t.request("GET", new URL(up.body.url).pathname + new URL(up.body.url).search);
    expect(res.status).toBe(302);
    const opened = await t.request("GET", `/api/v1/releases/dl-open/feed.json?platform=linux-x64&license_key=${key}`);
    expect(new URL(opened.body[0].url).search).toBe("");
  });
});
