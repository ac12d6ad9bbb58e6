import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { createTestApp, type TestApp } from "../support/app";
import type { RunningServer } from "../../src/server";
import { storageContract } from "./contract";

storageContract("local", async () => {
  const t = await createTestApp();
  const server = t.listen();
  return { storage: t.deps.storage, reach: (url) => url.replace(t.deps.config.baseUrl, server.url), close: () => t.close() };
});

describe("local driver: URLs signed by Keyward", () => {
  let t: TestApp;
  let server: RunningServer;
  const reach = (url: string) => url.replace(t.deps.config.baseUrl, server.url);
  beforeAll(async () => {
    t = await createTestApp();
    server = t.listen();
  });
  afterAll(() => t.close());

  async function expectForbidden(res: Response) {
    expect(res.status).toBe(403);
    const body = (await res.json()) as any;
    expect(body.success).toBe(false);
    expect(body.error.code).toBe("FORBIDDEN");
    expect(res.headers.get("x-request-id")).toBeTruthy();
  }

  async function put(url: string, body: string | Uint8Array, headers: Record<string, string>) {
    return fetch(reach(url), { method: "PUT", body, headers });
  }

  test("presigned URLs point at this service's storage route, under BASE_URL", async () => {
    const p = await t.deps.storage.presignPut("a/b.bin", { contentType: "text/plain" });
    expect(p.url.startsWith(`${t.deps.config.baseUrl}/api/v1/storage/objects/a/b.bin?`)).toBe(true);
    const g = await t.deps.storage.presignGet("a/b.bin");
    expect(g.url.startsWith(`${t.deps.config.baseUrl}/api/v1/storage/objects/a/b.bin?`)).toBe(true);
  });

  test("every tampered part of an upload URL is 403 and nothing is stored", async () => {
    const key = `t/${randomBytes(4).toString("hex")}.bin`;
    const p = await t.deps.storage.presignPut(key, { contentType: "application/zip", size: 5 });
    const u = new URL(p.url);
    const variants: [string, string, Record<string, string>][] = [];
    const withParam = (name: string, value: string) => {
      const c = new URL(u);
      c.searchParams.set(name, value);
      return c.toString();
    };
    variants.push(["sig", withParam("sig", u.searchParams.get("sig")!.replace(/^./, (c) => (c === "A" ? "B" : "A"))), p.headers]);
    variants.push(["expires", withParam("expires", String(Number(u.searchParams.get("expires")) + 3600)), p.headers]);
    variants.push(["size", withParam("size", "6"), p.headers]);
    variants.push(["key", p.url.replace(`/${key}?`, `/${key}x?`), p.headers]);
    variants.push(["content-type", p.url, { "content-type": "text/html" }]);
    const noSig = new URL(u);
    noSig.searchParams.delete("sig");
    variants.push(["missing sig", noSig.toString(), p.headers]);
    for (const [, url, headers] of variants) await expectForbidden(await put(url, "hello", headers));
    expect(await t.deps.storage.stat(key)).toBeNull();
    // The untampered URL works.
    expect((await put(p.url, "hello", p.headers)).status).toBe(200);
    expect(await t.deps.storage.stat(key)).toEqual({ size: 5 });
  });

  test("a download URL cannot be reused for another key, filename or type, nor as an upload URL", async () => {
    const key = `t/${randomBytes(4).toString("hex")}.bin`;
    const up = await t.deps.storage.presignPut(key, { contentType: "application/octet-stream" });
    await put(up.url, "secret bytes", up.headers);
    await t.deps.storage.presignPut(`t/other.bin`, { contentType: "application/octet-stream" });
    const g = await t.deps.storage.presignGet(key, { filename: "a.zip" });
    const u = new URL(g.url);
    const swapped = new URL(u);
    swapped.searchParams.set("filename", "evil.exe");
    await expectForbidden(await fetch(reach(swapped.toString())));
    const typed = new URL(u);
    typed.searchParams.set("type", "text/html");
    await expectForbidden(await fetch(reach(typed.toString())));
    await expectForbidden(await fetch(reach(g.url.replace(`/${key}?`, "/t/other.bin?"))));
    await expectForbidden(await put(g.url, "overwrite", { "content-type": "application/octet-stream" }));
    // And an upload URL does not download.
    await expectForbidden(await fetch(reach(up.url)));
    expect(await (await fetch(reach(g.url))).text()).toBe("secret bytes");
  });

  test("expired URLs are 403 (fixed clock moved past the expiry)", async () => {
    const key = `t/${randomBytes(4).toString("hex")}.bin`;
    const up = await t.deps.storage.presignPut(key, { contentType: "text/plain", expiresInSeconds: 60 });
    const early = await t.deps.storage.presignPut(key, { contentType: "text/plain", expiresInSeconds: 60 });
    expect((await put(early.url, "v1", early.headers)).status).toBe(200);
    const get = await t.deps.storage.presignGet(key, { expiresInSeconds: 30 });
    t.clock.advance(30_000);
    expect((await fetch(reach(get.url))).status).toBe(200); // the last valid second
    t.clock.advance(1_000);
    await expectForbidden(await fetch(reach(get.url)));
    t.clock.advance(30_000);
    await expectForbidden(await put(up.url, "v2", up.headers));
    expect(await t.deps.storage.stat(key)).toEqual({ size: 2 });
  });

  test("a path-traversal key in the URL is refused and touches nothing outside the storage dir", async () => {
    for (const path of ["/api/v1/storage/objects/..%2F..%2Fkeyward.db", "/api/v1/storage/objects/a/%2e%2e/%2e%2e/keyward.db", "/api/v1/storage/objects/%ZZ"]) {
      const res = await fetch(`${server.url}${path}?expires=9999999999&sig=x`);
      expect([403, 404]).toContain(res.status);
      const body = (await res.json()) as any;
      expect(body.success).toBe(false);
    }
  });

  test("an upload must match the size it was issued for; a failed upload leaves no object or temp file", async () => {
    const key = `t/${randomBytes(4).toString("hex")}.bin`;
    const p = await t.deps.storage.presignPut(key, { contentType: "application/octet-stream", size: 10 });
    const tooBig = await put(p.url, "x".repeat(11), p.headers);
    expect(tooBig.status).toBe(413);
    expect(((await tooBig.json()) as any).error.code).toBe("PAYLOAD_TOO_LARGE");
    const tooSmall = await put(p.url, "x".repeat(9), p.headers);
    expect(tooSmall.status).toBe(400);
    expect(await t.deps.storage.stat(key)).toBeNull();
    const tmp = join(t.deps.config.storage.localDir, ".tmp");
    expect(existsSync(tmp) ? readdirSync(tmp) : []).toEqual([]);
    expect((await put(p.url, "x".repeat(10), p.headers)).status).toBe(200);
  });

  test("uploads stream past MAX_BODY_BYTES (the JSON limit does not apply to raw objects)", async () => {
    const key = `t/${randomBytes(4).toString("hex")}.bin`;
    const size = t.deps.config.maxBodyBytes * 3 + 1;
    const p = await t.deps.storage.presignPut(key, { contentType: "application/octet-stream" });
    // A streamed (chunked) request body, as curl -T - or a browser upload would send.
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(c) {
        if (sent >= size) return c.close();
        const n = Math.min(256 * 1024, size - sent);
        c.enqueue(new Uint8Array(n).fill(7));
        sent += n;
      },
    });
    const res = await fetch(reach(p.url), { method: "PUT", body, headers: p.headers, duplex: "half" } as RequestInit);
    expect(res.status).toBe(200);
    expect(((await res.json()) as any).data).toEqual({ size });
    expect(await t.deps.storage.stat(key)).toEqual({ size });
  });

  test("downloads honour a single Range and report the full length otherwise", async () => {
    const key = `t/${randomBytes(4).toString("hex")}.bin`;
    const p = await t.deps.storage.presignPut(key, { contentType: "application/octet-stream" });
    await put(p.url, "0123456789", p.headers);
    const g = reach((await t.deps.storage.presignGet(key)).url);
    const part = await fetch(g, { headers: { range: "bytes=2-5" } });
    expect(part.status).toBe(206);
    expect(part.headers.get("content-range")).toBe("bytes 2-5/10");
    expect(await part.text()).toBe("2345");
    const suffix = await fetch(g, { headers: { range: "bytes=-3" } });
    expect(await suffix.text()).toBe("789");
    const beyond = await fetch(g, { headers: { range: "bytes=50-60" } });
    expect(beyond.status).toBe(416);
    const whole = await fetch(g);
    expect(whole.status).toBe(200);
    expect(await whole.text()).toBe("0123456789");
  });

  test("a valid URL for a missing object is 404 in the envelope", async () => {
    const g = await t.deps.storage.presignGet("t/not-there.bin");
    const res = await fetch(reach(g.url));
    expect(res.status).toBe(404);
    expect(((await res.json()) as any).error.code).toBe("NOT_FOUND");
  });

  test("the download streams: the body arrives in several chunks", async () => {
    const key = `t/${randomBytes(4).toString("hex")}.bin`;
    const size = 8 * 1024 * 1024;
    const p = await t.deps.storage.presignPut(key, { contentType: "application/octet-stream" });
    await put(p.url, new Uint8Array(randomBytes(size)), p.headers);
    const res = await fetch(reach((await t.deps.storage.presignGet(key)).url));
    expect(res.headers.get("content-length")).toBe(String(size));
    let chunks = 0;
    let total = 0;
    for await (const c of res.body!) {
      chunks++;
      total += c.byteLength;
    }
    expect(total).toBe(size);
    expect(chunks).toBeGreaterThan(1);
  });
});

describe("STORAGE_DRIVER=none", () => {
  test("every operation is 503 STORAGE_DISABLED and the local routes are not mounted", async () => {
    const t = await createTestApp({ env: { STORAGE_DRIVER: "none" } });
    try {
      const s = t.deps.storage;
      expect(s.driver).toBe("none");
      for (const op of [
        () => s.presignPut("a", { contentType: "x/y" }),
        () => s.presignGet("a"),
        () => s.stat("a"),
        () => s.read("a"),
        () => s.delete("a"),
      ]) {
        const err = await op().catch((e) => e);
        expect(err.code).toBe("STORAGE_DISABLED");
        expect(err.status).toBe(503);
      }
      const res = await t.request("GET", "/api/v1/storage/objects/a?expires=1&sig=x");
      expect(res.status).toBe(404);
    } finally {
      await t.close();
    }
  });
});
