import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { createTestApp, type TestApp } from "../../support/app";
import { makeProduct } from "../../support/factories";
import type { Product } from "../../../src/modules/products/repo";
import { stagingKeyFor } from "../../../src/modules/releases/domain";
import { addUploadedArtifact, createDraft, putObject, publishRelease } from "./support";

let t: TestApp;
let product: Product;
beforeAll(async () => {
  t = await createTestApp();
  product = await makeProduct(t.deps);
});
afterAll(() => t.close());

const sha256 = (s: string | Uint8Array) => createHash("sha256").update(s).digest("hex");
const audits = async (entityId: string) =>
  (await t.request("GET", `/api/v1/admin/audit?entity_id=${entityId}`)).body.data.items.map((a: { action: string }) => a.action);

describe("drafts", () => {
  test("create → 201 draft; duplicate version → 409 CONFLICT; equal precedence → 409", async () => {
    const res = await t.request("POST", `/api/v1/admin/products/${product.id}/releases`, {
      body: { version: "1.0.0", channel: "beta", notes: "<b>first</b>", minimum_os_version: "11.0.0" },
    });
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({
      product_id: product.id,
      version: "1.0.0",
      channel: "beta",
      notes: "<b>first</b>",
      minimum_os_version: "11.0.0",
      status: "draft",
      published_at: null,
      artifacts: [],
    });
    expect(await audits(res.body.data.id)).toEqual(["release.create"]);

    const dup = await t.request("POST", `/api/v1/admin/products/${product.id}/releases`, { body: { version: "1.0.0" } });
    expect(dup.status).toBe(409);
    expect(dup.body.error.code).toBe("CONFLICT");
    const sameRank = await t.request("POST", `/api/v1/admin/products/${product.id}/releases`, { body: { version: "1.0.0+build.2" } });
    expect(sameRank.status).toBe(409);
  });

  test("validation: bad version, channel, platform → 400; unknown product → 404", async () => {
    for (const body of [{ version: "1.0" }, { version: "v1.0.0" }, { version: "1.0.1", channel: "nightly" }]) {
      const res = await t.request("POST", `/api/v1/admin/products/${product.id}/releases`, { body });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe("VALIDATION_ERROR");
    }
    const missing = await t.request("POST", `/api/v1/admin/products/${crypto.randomUUID()}/releases`, { body: { version: "1.0.0" } });
    expect(missing.status).toBe(404);
  });

  test("PATCH edits a draft; a published release cannot be edited (409)", async () => {
    const d = await createDraft(t, product.id, { version: "1.1.0" });
    const res = await t.request("PATCH", `/api/v1/admin/releases/${d.id}`, { body: { notes: "fixed", channel: "alpha", minimum_os_version: null } });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ notes: "fixed", channel: "alpha", minimum_os_version: null });
    // Absent fields stay as they are.
    const notesOnly = await t.request("PATCH", `/api/v1/admin/releases/${d.id}`, { body: { notes: "again" } });
    expect(notesOnly.body.data).toMatchObject({ notes: "again", channel: "alpha" });
    const pub = await publishRelease(t, product.id, "1.1.1");
    const late = await t.request("PATCH", `/api/v1/admin/releases/${pub.id}`, { body: { notes: "too late" } });
    expect(late.status).toBe(409);
    expect(late.body.error.code).toBe("INVALID_TRANSITION");
  });

  test("list: newest version first, filters, cursor pages", async () => {
    const p = await makeProduct(t.deps);
    for (const v of ["1.0.0", "1.10.0", "1.2.0", "1.2.0-beta.1", "0.9.0"]) await createDraft(t, p.id, { version: v, channel: v.includes("beta") ? "beta" : "stable" });
    const all = await t.request("GET", `/api/v1/admin/products/${p.id}/releases`);
    expect(all.body.data.items.map((r: { version: string }) => r.version)).toEqual(["1.10.0", "1.2.0", "1.2.0-beta.1", "1.0.0", "0.9.0"]);
    const beta = await t.request("GET", `/api/v1/admin/products/${p.id}/releases?channel=beta`);
    expect(beta.body.data.items.map((r: { version: string }) => r.version)).toEqual(["1.2.0-beta.1"]);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: any = await t.request("GET", `/api/v1/admin/products/${p.id}/releases?limit=2${cursor ? `&cursor=${cursor}` : ""}`);
      expect(page.status).toBe(200);
      seen.push(...page.body.data.items.map((r: { version: string }) => r.version));
      cursor = page.body.data.next_cursor;
    } while (cursor);
    expect(seen).toEqual(["1.10.0", "1.2.0", "1.2.0-beta.1", "1.0.0", "0.9.0"]);
    expect((await t.request("GET", `/api/v1/admin/products/${p.id}/releases?status=published`)).body.data.items).toEqual([]);
    expect((await t.request("GET", `/api/v1/admin/products/${p.id}/releases?cursor=garbage`)).status).toBe(400);
  });
});

describe("artifacts", () => {
  test("add returns a presigned PUT (to the staging key); re-adding a platform replaces it and removes the old object", async () => {
    const d = await createDraft(t, product.id, { version: "2.0.0" });
    const first = await t.request("POST", `/api/v1/admin/releases/${d.id}/artifacts`, {
      body: { platform: "windows-x64", filename: "Setup.exe", content_type: "application/octet-stream", size: 5 },
    });
    expect(first.status).toBe(201);
    const upload = structuredClone(first.body.data.upload);
    expect(first.body.data.artifact).toMatchObject({ platform: "windows-x64", status: "pending", size: 5, sha256: null, file_size: null });
    expect(first.body.data.upload).toMatchObject({ method: "PUT", url: expect.stringMatching(/^http/), expires_at: "2026-11-21T09:00:00.000Z" });
    expect((await putObject(t, upload, "hello")).status).toBe(200);
    const oldKey = stagingKeyFor((await t.deps.repos.releases.findArtifact(first.body.data.artifact.id))!.artifact.storageKey);
    expect(await t.deps.storage.stat(oldKey)).toEqual({ size: 5 });

    const second = await t.request("POST", `/api/v1/admin/releases/${d.id}/artifacts`, {
      body: { platform: "windows-x64", filename: "Setup-2.exe", content_type: "application/octet-stream", size: 3 },
    });
    expect(second.status).toBe(201);
    const release = (await t.request("GET", `/api/v1/admin/releases/${d.id}`)).body.data;
    expect(release.artifacts.map((a: { id: string }) => a.id)).toEqual([second.body.data.artifact.id]);
    expect(await t.deps.storage.stat(oldKey)).toBeNull();
    expect(await audits(second.body.data.artifact.id)).toEqual(["artifact.add"]);
  });

  test("invalid filename or platform → 400", async () => {
    const d = await createDraft(t, product.id, { version: "2.0.1" });
    for (const body of [
      { platform: "windows-x86", filename: "a.exe", content_type: "application/octet-stream", size: 1 },
      { platform: "windows-x64", filename: "../a.exe", content_type: "application/octet-stream", size: 1 },
      { platform: "windows-x64", filename: "a\nb.exe", content_type: "application/octet-stream", size: 1 },
      { platform: "windows-x64", filename: "a.exe", content_type: "application/octet-stream", size: 0 },
    ]) {
      expect((await t.request("POST", `/api/v1/admin/releases/${d.id}/artifacts`, { body })).status).toBe(400);
    }
  });

  test("finalize computes sha256 and size server-side; missing object and expected_sha256 mismatch → 409", async () => {
    const d = await createDraft(t, product.id, { version: "2.1.0" });
    const add = await t.request("POST", `/api/v1/admin/releases/${d.id}/artifacts`, {
      body: { platform: "linux-x64", filename: "app.AppImage", content_type: "application/octet-stream", size: 11 },
    });
    const id = add.body.data.artifact.id;
    const early = await t.request("POST", `/api/v1/admin/artifacts/${id}/finalize`, { body: {} });
    expect(early.status).toBe(409);
    expect(early.body.error.code).toBe("CONFLICT");

    expect((await putObject(t, add.body.data.upload, "hello world")).status).toBe(200);
    const wrong = await t.request("POST", `/api/v1/admin/artifacts/${id}/finalize`, { body: { expected_sha256: "0".repeat(64) } });
    expect(wrong.status).toBe(409);
    expect(wrong.body.error.details.actual_sha256).toBe(sha256("hello world"));

    const ok = await t.request("POST", `/api/v1/admin/artifacts/${id}/finalize`, { body: { expected_sha256: sha256("hello world").toUpperCase() } });
    expect(ok.status).toBe(200);
    expect(ok.body.data).toMatchObject({
      status: "finalized",
      sha256: sha256("hello world"),
      file_size: 11,
      blake2b512: createHash("blake2b512").update("hello world").digest("hex"),
      ed_signature: null,
    });
    expect(await audits(id)).toEqual(["artifact.finalize", "artifact.add"]);
  });
});

describe("publish, yank, unyank, delete", () => {
  test("publish refuses a draft without artifacts or with a pending one (409)", async () => {
    const empty = await createDraft(t, product.id, { version: "3.0.0" });
    const r1 = await t.request("POST", `/api/v1/admin/releases/${empty.id}/publish`);
    expect(r1.status).toBe(409);
    await addUploadedArtifact(t, empty.id, "darwin-arm64", "mac");
    await addUploadedArtifact(t, empty.id, "linux-x64", "linux", { finalize: false });
    const r2 = await t.request("POST", `/api/v1/admin/releases/${empty.id}/publish`);
    expect(r2.status).toBe(409);
    expect(r2.body.error.details.pending_platforms).toEqual(["linux-x64"]);
    expect((await t.request("GET", `/api/v1/admin/releases/${empty.id}`)).body.data.status).toBe("draft");
  });

  test("publish signs every artifact and flips to published; a second publish → 409", async () => {
    const d = await createDraft(t, product.id, { version: "3.1.0" });
    await addUploadedArtifact(t, d.id, "darwin-arm64", "mac bytes");
    await addUploadedArtifact(t, d.id, "windows-x64", "win bytes");
    const res = await t.request("POST", `/api/v1/admin/releases/${d.id}/publish`);
    expect(res.status).toBe(200);
    expect(res.body.data.status).toBe("published");
    expect(res.body.data.published_at).toBe(t.clock.now().toISOString());
    for (const a of res.body.data.artifacts) {
      expect(Buffer.from(a.ed_signature, "base64").length).toBe(64);
      expect(a.minisign_signature).toMatch(/^untrusted comment: .*\nRU[A-Za-z0-9+/=]{98}\ntrusted comment: timestamp:\d+\tfile:App-[a-z0-9-]+\.zip\tversion:3\.1\.0\n[A-Za-z0-9+/=]{88}\n$/);
      expect(a.signing_kid).toBeTruthy();
    }
    const again = await t.request("POST", `/api/v1/admin/releases/${d.id}/publish`);
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe("INVALID_TRANSITION");
    // Published releases are frozen: no new artifacts, no re-finalize, no delete.
    const add = await t.request("POST", `/api/v1/admin/releases/${d.id}/artifacts`, {
      body: { platform: "linux-x64", filename: "a.bin", content_type: "application/octet-stream", size: 1 },
    });
    expect(add.status).toBe(409);
    expect((await t.request("POST", `/api/v1/admin/artifacts/${res.body.data.artifacts[0].id}/finalize`, { body: {} })).status).toBe(409);
    expect((await t.request("DELETE", `/api/v1/admin/releases/${d.id}`)).status).toBe(409);
    expect(await audits(d.id)).toEqual(["release.publish", "release.create"]);
  });

  test("an object changed in storage after finalize is never signed (publish → 409, stays draft)", async () => {
    const d = await createDraft(t, product.id, { version: "3.2.0" });
    const add = await t.request("POST", `/api/v1/admin/releases/${d.id}/artifacts`, {
      body: { platform: "linux-x64", filename: "a.bin", content_type: "application/octet-stream", size: 4 },
    });
    await putObject(t, add.body.data.upload, "good");
    expect((await t.request("POST", `/api/v1/admin/artifacts/${add.body.data.artifact.id}/finalize`, { body: {} })).status).toBe(200);
    // No upload URL reaches the final key any more (immutable-artifact.test.ts); this stands for a
    // bucket changed behind Keyward's back: other bytes of the same size.
    const key = (await t.deps.repos.releases.findArtifact(add.body.data.artifact.id))!.artifact.storageKey;
    await t.deps.storage.put(key, new TextEncoder().encode("evil"), "application/octet-stream");
    const res = await t.request("POST", `/api/v1/admin/releases/${d.id}/publish`);
    expect(res.status).toBe(409);
    const after = (await t.request("GET", `/api/v1/admin/releases/${d.id}`)).body.data;
    expect(after.status).toBe("draft");
    expect(after.artifacts[0].ed_signature).toBeNull();
  });

  test("yank needs a reason; yank/unyank transitions; audited", async () => {
    const pub = await publishRelease(t, product.id, "4.0.0");
    expect((await t.request("POST", `/api/v1/admin/releases/${pub.id}/yank`, { body: {} })).status).toBe(400);
    const y = await t.request("POST", `/api/v1/admin/releases/${pub.id}/yank`, { body: { reason: "crashes on start" } });
    expect(y.status).toBe(200);
    expect(y.body.data).toMatchObject({ status: "yanked", yank_reason: "crashes on start", yanked_at: t.clock.now().toISOString() });
    expect((await t.request("POST", `/api/v1/admin/releases/${pub.id}/yank`, { body: { reason: "again" } })).status).toBe(409);
    const u = await t.request("POST", `/api/v1/admin/releases/${pub.id}/unyank`);
    expect(u.status).toBe(200);
    expect(u.body.data).toMatchObject({ status: "published", yank_reason: null, yanked_at: null, published_at: pub.published_at });
    expect((await t.request("POST", `/api/v1/admin/releases/${pub.id}/unyank`)).status).toBe(409);
    const draft = await createDraft(t, product.id, { version: "4.0.1" });
    expect((await t.request("POST", `/api/v1/admin/releases/${draft.id}/yank`, { body: { reason: "x" } })).status).toBe(409);
    expect(await audits(pub.id)).toEqual(["release.unyank", "release.yank", "release.publish", "release.create"]);
  });

  test("delete removes a draft, its artifacts and their stored objects", async () => {
    const d = await createDraft(t, product.id, { version: "5.0.0" });
    const a = await addUploadedArtifact(t, d.id, "linux-arm64", "bytes");
    const key = (await t.deps.repos.releases.findArtifact(a.id))!.artifact.storageKey;
    const res = await t.request("DELETE", `/api/v1/admin/releases/${d.id}`);
    expect(res.status).toBe(200);
    expect((await t.request("GET", `/api/v1/admin/releases/${d.id}`)).status).toBe(404);
    expect(await t.deps.repos.releases.findArtifact(a.id)).toBeNull();
    expect(await t.deps.storage.stat(key)).toBeNull();
    expect(await audits(d.id)).toEqual(["release.delete", "release.create"]);
  });
});

describe("credentials", () => {
  test("releases:write works on its product; a key bound elsewhere → 403 PRODUCT_SCOPE_MISMATCH; licenses:write → 403", async () => {
    const other = await makeProduct(t.deps);
    const bound = await t.apiKey(["releases:write"], product.id);
    const d = await createDraft(t, product.id, { version: "6.0.0" }, bound);
    await addUploadedArtifact(t, d.id, "darwin-x64", "x", { key: bound });
    expect((await t.request("POST", `/api/v1/admin/releases/${d.id}/publish`, { key: bound })).status).toBe(200);

    const foreign = await t.apiKey(["releases:write"], other.id);
    for (const [method, path, body] of [
      ["GET", `/api/v1/admin/releases/${d.id}`, undefined],
      ["POST", `/api/v1/admin/releases/${d.id}/yank`, { reason: "x" }],
      ["POST", `/api/v1/admin/products/${product.id}/releases`, { version: "6.0.1" }],
      ["GET", `/api/v1/admin/products/${product.id}/releases`, undefined],
    ] as const) {
      const res = await t.request(method, path, { body, key: foreign });
      expect(res.status).toBe(403);
      expect(res.body.error.code).toBe("PRODUCT_SCOPE_MISMATCH");
    }
    const licensesKey = await t.apiKey(["licenses:write"]);
    const res = await t.request("POST", `/api/v1/admin/products/${product.id}/releases`, { body: { version: "6.0.2" }, key: licensesKey });
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe("INSUFFICIENT_SCOPE");
    expect((await t.request("GET", `/api/v1/admin/releases/${d.id}`, { key: null })).status).toBe(401);
  });
});

test("a product with releases cannot be deleted (409 CONFLICT)", async () => {
  const p = await makeProduct(t.deps);
  await createDraft(t, p.id, { version: "1.0.0" });
  const res = await t.request("DELETE", `/api/v1/admin/products/${p.id}`);
  expect(res.status).toBe(409);
  expect(res.body.error.code).toBe("CONFLICT");
});

describe("storage disabled", () => {
  test("adding an artifact with STORAGE_DRIVER=none → 503 STORAGE_DISABLED, nothing written", async () => {
    const t2 = await createTestApp({ env: { STORAGE_DRIVER: "none" } });
    try {
      const p = await makeProduct(t2.deps);
      const d = await createDraft(t2, p.id, { version: "1.0.0" });
      const res = await t2.request("POST", `/api/v1/admin/releases/${d.id}/artifacts`, {
        body: { platform: "linux-x64", filename: "a.bin", content_type: "application/octet-stream", size: 1 },
      });
      expect(res.status).toBe(503);
      expect(res.body.error.code).toBe("STORAGE_DISABLED");
      expect((await t2.request("GET", `/api/v1/admin/releases/${d.id}`)).body.data.artifacts).toEqual([]);
    } finally {
      await t2.close();
    }
  });
});
