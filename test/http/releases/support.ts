// Shared by the releases, feeds and downloads HTTP tests: drive the real admin workflow
// (draft → artifact → presigned PUT → finalize → publish) through the API.
import { expect } from "bun:test";
import type { TestApp } from "../../support/app";
import type { Channel, Platform } from "../../../src/modules/releases/repo";

export interface Upload {
  url: string;
  method: string;
  headers: Record<string, string>;
  expires_at: string;
}

/**
 * Sends bytes to a presigned URL. The local driver's URLs point at Keyward itself (config.baseUrl),
 * so the request goes to the in-process app with the URL's path and query.
 */
export async function putObject(t: TestApp, upload: Upload, bytes: Uint8Array | string): Promise<Response> {
  const u = new URL(upload.url);
  return t.app.handle(
    new Request(`http://localhost${u.pathname}${u.search}`, { method: upload.method, headers: upload.headers, body: bytes }),
  );
}

/** Fetches a presigned GET URL (local driver) in-process and returns the bytes. */
export async function getObject(t: TestApp, url: string): Promise<{ status: number; bytes: Uint8Array; headers: Headers }> {
  const u = new URL(url);
  const res = await t.app.handle(new Request(`http://localhost${u.pathname}${u.search}`));
  return { status: res.status, bytes: new Uint8Array(await res.arrayBuffer()), headers: res.headers };
}

export async function createDraft(
  t: TestApp,
  productId: string,
  body: { version: string; channel?: Channel; notes?: string; minimum_os_version?: string | null },
  key?: string,
) {
  const res = await t.request("POST", `/api/v1/admin/products/${productId}/releases`, { body, key });
  expect(res.status).toBe(201);
  return res.body.data as { id: string; version: string; status: string };
}

/** Adds an artifact, uploads its bytes, finalizes it; returns the finalized artifact. */
export async function addUploadedArtifact(
  t: TestApp,
  releaseId: string,
  platform: Platform,
  bytes: Uint8Array | string,
  opts: { filename?: string; finalize?: boolean; key?: string } = {},
) {
  const data = typeof bytes === "string" ? new TextEncoder().encode(bytes) : bytes;
  const filename = opts.filename ?? `App-${platform}.zip`;
  const add = await t.request("POST", `/api/v1/admin/releases/${releaseId}/artifacts`, {
    body: { platform, filename, content_type: "application/zip", size: data.byteLength },
    key: opts.key,
  });
  expect(add.status).toBe(201);
  const put = await putObject(t, add.body.data.upload, data);
  expect(put.status).toBe(200);
  if (opts.finalize === false) return add.body.data.artifact;
  const fin = await t.request("POST", `/api/v1/admin/artifacts/${add.body.data.artifact.id}/finalize`, { body: {}, key: opts.key });
  expect(fin.status).toBe(200);
  return fin.body.data;
}

/** A published release with one artifact per listed platform (bytes derived from version+platform). */
export async function publishRelease(
  t: TestApp,
  productId: string,
  version: string,
  opts: { channel?: Channel; platforms?: Platform[]; notes?: string; minimum_os_version?: string; bytes?: (p: Platform) => Uint8Array | string } = {},
) {
  const draft = await createDraft(t, productId, {
    version,
    channel: opts.channel,
    notes: opts.notes,
    minimum_os_version: opts.minimum_os_version,
  });
  for (const p of opts.platforms ?? ["darwin-arm64"]) {
    await addUploadedArtifact(t, draft.id, p, opts.bytes ? opts.bytes(p) : `${version} for ${p}\n`);
  }
  const pub = await t.request("POST", `/api/v1/admin/releases/${draft.id}/publish`);
  expect(pub.status).toBe(200);
  return pub.body.data;
}
