// Issue 8 point 3: a published artifact cannot be swapped. Presigned upload URLs only ever target a
// staging key; finalize moves the bytes to the final key and hashes exactly what landed there. So an
// upload through a finalized artifact's URL — refused by the local driver, accepted by S3 into the
// staging key — never changes what downloads serve, and the download hashes to the published
// SHA-256 and verifies against the published signature. Run on both drivers (S3: a real s3rver).
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { createHash, createPublicKey, randomBytes, verify } from "node:crypto";
import { createTestApp, type TestApp } from "../../support/app";
import { startS3rver, type RunningS3 } from "../../support/s3rver";
import { makeProduct } from "../../support/factories";
import type { Product } from "../../../src/modules/products/repo";
import { stagingKeyFor } from "../../../src/modules/releases/domain";
import { createDraft, getObject, putObject, type Upload } from "./support";

// Generous: finalize and publish stream every byte, and the machine running the suite may be busy.
setDefaultTimeout(60_000);

const sha256 = (b: Uint8Array) => createHash("sha256").update(b).digest("hex");

for (const driver of ["local", "s3"] as const) {
  describe(`${driver} driver`, async () => {
    let t: TestApp;
    let s3: RunningS3 | null = null;
    let product: Product;
    let version = 0;

    beforeAll(async () => {
      if (driver === "s3") s3 = await startS3rver();
      t = await createTestApp({ env: s3?.env ?? {} });
      product = await makeProduct(t.deps, { distribution: "open" });
    });
    afterAll(async () => {
      await t.close();
      await s3?.close();
    });

    // The local driver's URLs point at Keyward itself (in-process); S3's at the bucket.
    const put = async (upload: Upload, bytes: Uint8Array): Promise<Response> =>
      driver === "local"
        ? putObject(t, upload, bytes)
        : fetch(upload.url, { method: upload.method, headers: upload.headers, body: bytes });
    const fetchBytes = async (url: string): Promise<Uint8Array> => {
      if (driver === "local") {
        const r = await getObject(t, url);
        expect(r.status).toBe(200);
        return r.bytes;
      }
      const r = await fetch(url);
      expect(r.status).toBe(200);
      return new Uint8Array(await r.arrayBuffer());
    };
    /** The public download path a feed embeds: 302 to a fresh storage URL, then the bytes. */
    const download = async (artifactId: string): Promise<Uint8Array> => {
      const res = await t.request("GET", `/api/v1/releases/${product.slug}/download/${artifactId}`);
      expect(res.status).toBe(302);
      return await fetchBytes(res.headers.get("location")!);
    };
    const addArtifact = async (releaseId: string, size: number, platform = "linux-x64") => {
      const res = await t.request("POST", `/api/v1/admin/releases/${releaseId}/artifacts`, {
        body: { platform, filename: "App.tar.gz", content_type: "application/gzip", size },
      });
      expect(res.status).toBe(201);
      return res.body.data as { artifact: { id: string }; upload: Upload };
    };
    const finalize = (artifactId: string) => t.request("POST", `/api/v1/admin/artifacts/${artifactId}/finalize`, { body: {} });
    const publish = (releaseId: string) => t.request("POST", `/api/v1/admin/releases/${releaseId}/publish`);
    const storageKey = async (artifactId: string) => (await t.deps.repos.releases.findArtifact(artifactId))!.artifact.storageKey;
    async function expectRefused(res: Response, code: string, status: number) {
      expect(res.status).toBe(status);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe(code);
    }
    async function verifiesWithPublishedKey(bytes: Uint8Array, edSignature: string) {
      const keys = await t.request("GET", `/api/v1/admin/products/${product.id}/signing-keys`);
      const raw = Buffer.from(keys.body.data.items[0].sparkle_public_key, "base64");
      const spki = createPublicKey({ key: Buffer.concat([Buffer.from("302a300506032b6570032100", "hex"), raw]), format: "der", type: "spki" });
      return await verify(null, bytes, spki, Buffer.from(edSignature, "base64"));
    }

    test("an upload to a finalized artifact's URL changes nothing: the download hashes to the published SHA-256", async () => {
      const good = new Uint8Array(randomBytes(70_001));
      const evil = new Uint8Array(randomBytes(good.length));
      const draft = await createDraft(t, product.id, { version: `1.0.${version++}` });
      const { artifact, upload } = await addArtifact(draft.id, good.length);
      expect((await put(upload, good)).status).toBe(200);
      const fin = await finalize(artifact.id);
      expect(fin.status).toBe(200);
      expect(fin.body.data.sha256).toBe(sha256(good));

      // The URL is still within its lifetime. Local refuses it; S3 cannot revoke a presigned PUT, so
      // the bytes land in the staging key, which nothing reads once the artifact is finalized.
      const late = await put(upload, evil);
      if (driver === "local") await expectRefused(late, "INVALID_TRANSITION", 409);
      // Finalizing again re-hashes the final object in place; it never takes staged bytes.
      const again = await finalize(artifact.id);
      expect(again.status).toBe(200);
      expect(again.body.data.sha256).toBe(sha256(good));

      const pub = await publish(draft.id);
      expect(pub.status).toBe(200);
      const published = pub.body.data.artifacts[0];
      expect(published.sha256).toBe(sha256(good));

      const afterPublish = await put(upload, evil);
      if (driver === "local") await expectRefused(afterPublish, "INVALID_TRANSITION", 409);

      const served = await download(artifact.id);
      expect(sha256(served)).toBe(published.sha256);
      expect(served.byteLength).toBe(published.file_size);
      expect(await verifiesWithPublishedKey(served, published.ed_signature)).toBe(true);
    });

    test("before finalize, the upload URL may be used again: finalize takes the last upload", async () => {
      const first = new Uint8Array(randomBytes(4096));
      const second = new Uint8Array(randomBytes(4096));
      const draft = await createDraft(t, product.id, { version: `1.0.${version++}` });
      const { artifact, upload } = await addArtifact(draft.id, first.length);
      expect((await put(upload, first)).status).toBe(200);
      expect((await put(upload, second)).status).toBe(200);
      expect((await finalize(artifact.id)).body.data.sha256).toBe(sha256(second));
      // The staged object was moved, not copied: only the final object remains.
      expect(await t.deps.storage.stat(stagingKeyFor(await storageKey(artifact.id)))).toBeNull();
      expect(await t.deps.storage.stat(await storageKey(artifact.id))).toEqual({ size: second.length });
      expect((await publish(draft.id)).status).toBe(200);
      expect(sha256(await download(artifact.id))).toBe(sha256(second));
    });

    test("a wrong-size upload is refused at finalize and stays staged for a corrected upload", async () => {
      const draft = await createDraft(t, product.id, { version: `1.0.${version++}` });
      const { artifact } = await addArtifact(draft.id, 10);
      // Bypass the local driver's size check (S3 does not have one): a server-side write to staging.
      await t.deps.storage.put(stagingKeyFor(await storageKey(artifact.id)), new Uint8Array(11), "application/gzip");
      const res = await finalize(artifact.id);
      expect(res.status).toBe(409);
      expect(res.body.error.details).toEqual({ declared_size: 10, uploaded_size: 11 });
      expect(await t.deps.storage.stat(await storageKey(artifact.id))).toBeNull();
      expect(await t.deps.storage.stat(stagingKeyFor(await storageKey(artifact.id)))).toEqual({ size: 11 });
    });

    test("an artifact uploaded under the old layout (bytes at the final key) finalizes, publishes and downloads", async () => {
      const bytes = new Uint8Array(randomBytes(5000));
      const draft = await createDraft(t, product.id, { version: `1.0.${version++}` });
      const { artifact } = await addArtifact(draft.id, bytes.length);
      // An upload URL issued before the staging layout targeted the final key itself.
      const legacy = await t.deps.storage.presignPut(await storageKey(artifact.id), { contentType: "application/gzip", size: bytes.length });
      const legacyUpload = { url: legacy.url, method: "PUT", headers: legacy.headers, expires_at: legacy.expiresAt.toISOString() };
      expect((await put(legacyUpload, bytes)).status).toBe(200);
      const fin = await finalize(artifact.id);
      expect(fin.status).toBe(200);
      expect(fin.body.data.sha256).toBe(sha256(bytes));
      // Local: such a URL is refused too once the artifact is finalized. (S3 cannot refuse it before
      // it expires: docs/updates.md says so for artifacts uploaded before the upgrade.)
      if (driver === "local") await expectRefused(await put(legacyUpload, new Uint8Array(bytes.length)), "INVALID_TRANSITION", 409);
      expect((await publish(draft.id)).status).toBe(200);
      expect(sha256(await download(artifact.id))).toBe(sha256(bytes));
    });

    test("deleting a draft removes both the staged and the finalized objects", async () => {
      const draft = await createDraft(t, product.id, { version: `1.0.${version++}` });
      const staged = await addArtifact(draft.id, 3, "linux-x64");
      const done = await addArtifact(draft.id, 4, "linux-arm64");
      expect((await put(staged.upload, new Uint8Array([1, 2, 3]))).status).toBe(200);
      expect((await put(done.upload, new Uint8Array([1, 2, 3, 4]))).status).toBe(200);
      expect((await finalize(done.artifact.id)).status).toBe(200);
      const keys = [stagingKeyFor(await storageKey(staged.artifact.id)), await storageKey(done.artifact.id)];
      for (const k of keys) expect(await t.deps.storage.stat(k)).not.toBeNull();
      expect((await t.request("DELETE", `/api/v1/admin/releases/${draft.id}`)).status).toBe(200);
      for (const k of keys) expect(await t.deps.storage.stat(k)).toBeNull();
    });

    if (driver === "local") {
      test("the upload URL of a replaced artifact is 404; a tampered one is still 403 first", async () => {
        const draft = await createDraft(t, product.id, { version: `1.0.${version++}` });
        const first = await addArtifact(draft.id, 3);
        await addArtifact(draft.id, 3); // same platform: replaces the first
        await expectRefused(await put(first.upload, new Uint8Array(3)), "NOT_FOUND", 404);
        const tampered = { ...first.upload, url: first.upload.url.replace(/sig=[^&]+/, "sig=AAAA") };
        await expectRefused(await put(tampered, new Uint8Array(3)), "FORBIDDEN", 403);
      });

      test("an upload that was streaming when finalize ran does not land", async () => {
        const draft = await createDraft(t, product.id, { version: `1.0.${version++}` });
        const { artifact, upload } = await addArtifact(draft.id, 6);
        expect((await put(upload, new TextEncoder().encode("first!"))).status).toBe(200);
        // A body that finalize overtakes: the first chunk arrives, then finalize runs, then the rest.
        let step = 0;
        let finalized: Promise<unknown> | null = null;
        const body = new ReadableStream<Uint8Array>({
          async pull(c) {
            if (step++ === 0) return c.enqueue(new TextEncoder().encode("sec"));
            finalized ??= finalize(artifact.id);
            await finalized;
            c.enqueue(new TextEncoder().encode("ond"));
            c.close();
          },
        });
        const u = new URL(upload.url);
        const res = await t.app.handle(
          new Request(`http://localhost${u.pathname}${u.search}`, { method: "PUT", headers: upload.headers, body, duplex: "half" } as RequestInit),
        );
        await expectRefused(res, "INVALID_TRANSITION", 409);
        expect(await t.deps.storage.stat(stagingKeyFor(await storageKey(artifact.id)))).toBeNull();
        const a = (await t.deps.repos.releases.findArtifact(artifact.id))!.artifact;
        expect(a.sha256).toBe(sha256(new TextEncoder().encode("first!")));
      });
    }
  });
}
