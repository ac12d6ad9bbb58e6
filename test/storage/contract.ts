// One behavioural suite every storage driver must pass (DECISIONS: Releases and storage). Clients
// use the presigned URLs with plain fetch, exactly as an admin's curl or a downloader would; the
// server side uses stat/read/delete as finalize and publish do.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash, randomBytes } from "node:crypto";
import { hashStream } from "../../src/crypto/stream-hash";
import type { Storage } from "../../src/modules/storage/storage";

export interface ContractTarget {
  storage: Storage;
  /** Maps a presigned URL to one the test can reach (the local driver's BASE_URL has no port). */
  reach(url: string): string;
  close(): Promise<void>;
}

const uniqueKey = (name: string) => `products/${randomBytes(6).toString("hex")}/${name}`;

async function errorCode(p: Promise<unknown>): Promise<string | undefined> {
  try {
    await p;
    return undefined;
  } catch (e) {
    return (e as { code?: string }).code;
  }
}

export function storageContract(name: string, setup: () => Promise<ContractTarget>) {
  describe(`storage contract: ${name}`, () => {
    let target: ContractTarget;
    let s: Storage;
    beforeAll(async () => {
      target = await setup();
      s = target.storage;
    });
    afterAll(() => target.close());

    async function upload(key: string, data: Uint8Array, contentType = "application/octet-stream") {
      const put = await s.presignPut(key, { contentType, size: data.length });
      expect(put.method).toBe("PUT");
      const res = await fetch(target.reach(put.url), { method: "PUT", headers: put.headers, body: data });
      expect(res.status).toBeGreaterThanOrEqual(200);
      expect(res.status).toBeLessThan(300);
      await res.arrayBuffer();
    }

    async function readAll(stream: ReadableStream<Uint8Array>): Promise<{ bytes: Buffer; chunks: number; largest: number }> {
      const parts: Uint8Array[] = [];
      let largest = 0;
      for await (const c of stream) {
        parts.push(c);
        largest = Math.max(largest, c.byteLength);
      }
      return { bytes: Buffer.concat(parts), chunks: parts.length, largest };
    }

    test("server-side put is readable and replaces an existing object", async () => {
      const key = uniqueKey("notes.txt");
      expect(await s.put(key, new TextEncoder().encode("first"), "text/plain")).toEqual({ size: 5 });
      expect(await s.put(key, new TextEncoder().encode("second!"), "text/plain")).toEqual({ size: 7 });
      expect(await s.stat(key)).toEqual({ size: 7 });
      expect((await readAll(await s.read(key))).bytes.toString()).toBe("second!");
      await s.delete(key);
      expect(await s.stat(key)).toBeNull();
    });

    test("presigned PUT via fetch, then stat, read and delete", async () => {
      const key = uniqueKey("App-1.0.0.zip");
      const data = new Uint8Array(randomBytes(123_457));
      await upload(key, data, "application/zip");
      expect(await s.stat(key)).toEqual({ size: data.length });
      const { bytes } = await readAll(await s.read(key));
      expect(bytes.equals(data)).toBe(true);
      await s.delete(key);
      expect(await s.stat(key)).toBeNull();
      expect(await errorCode(s.read(key))).toBe("NOT_FOUND");
      // Deleting a missing object is not an error (publish cleanup may run twice).
      await s.delete(key);
    });

    test("presigned PUT reports what the client must send and when it expires", async () => {
      const put = await s.presignPut(uniqueKey("x.bin"), { contentType: "application/x-apple-diskimage", expiresInSeconds: 120 });
      expect(put.headers["content-type"]).toBe("application/x-apple-diskimage");
      expect(put.expiresAt).toBeInstanceOf(Date);
      expect(put.url.startsWith("http")).toBe(true);
    });

    test("presigned GET via fetch returns the exact bytes under the download filename", async () => {
      const key = uniqueKey("artifact.bin");
      const data = new Uint8Array(randomBytes(70_001));
      await upload(key, data);
      const get = await s.presignGet(key, { filename: "MyApp 2.0.dmg", contentType: "application/x-apple-diskimage" });
      expect(get.method).toBe("GET");
      const res = await fetch(target.reach(get.url));
      expect(res.status).toBe(200);
      expect(Buffer.from(await res.arrayBuffer()).equals(data)).toBe(true);
      expect(res.headers.get("content-disposition")).toContain("MyApp 2.0.dmg");
      expect(res.headers.get("content-type")).toBe("application/x-apple-diskimage");
      expect(res.headers.get("content-length")).toBe(String(data.length));
    });

    test("an empty object round-trips", async () => {
      const key = uniqueKey("empty.txt");
      await upload(key, new Uint8Array(0));
      expect(await s.stat(key)).toEqual({ size: 0 });
      expect((await readAll(await s.read(key))).bytes.length).toBe(0);
    });

    test("keys with the allowed punctuation round-trip through URL encoding", async () => {
      const key = uniqueKey("App+1.0@x,y=(z)~_-.tar.gz");
      const data = new Uint8Array(randomBytes(1000));
      await upload(key, data);
      const res = await fetch(target.reach((await s.presignGet(key)).url));
      expect(Buffer.from(await res.arrayBuffer()).equals(data)).toBe(true);
    });

    test("stat of a missing object is null", async () => {
      expect(await s.stat(uniqueKey("never-uploaded"))).toBeNull();
    });

    test("keys that could escape the storage root are refused before any I/O", async () => {
      for (const bad of ["../etc/passwd", "a/../../b", "/abs", "a//b", ".hidden", "a/.tmp/x", "a b", "a\\b", "", "x".repeat(513)]) {
        expect(await errorCode(s.presignPut(bad, { contentType: "text/plain" }))).toBe("VALIDATION_ERROR");
        expect(await errorCode(s.presignGet(bad))).toBe("VALIDATION_ERROR");
        expect(await errorCode(s.stat(bad))).toBe("VALIDATION_ERROR");
        expect(await errorCode(s.read(bad))).toBe("VALIDATION_ERROR");
        expect(await errorCode(s.delete(bad))).toBe("VALIDATION_ERROR");
      }
    });

    test("a multi-MB object is read as a stream of bounded chunks, never as one buffer", async () => {
      const key = uniqueKey("big.bin");
      const size = 12 * 1024 * 1024 + 7;
      const data = new Uint8Array(randomBytes(size));
      await upload(key, data);
      const { bytes, chunks, largest } = await readAll(await s.read(key));
      expect(bytes.length).toBe(size);
      expect(createHash("sha256").update(bytes).digest("hex")).toBe(createHash("sha256").update(data).digest("hex"));
      expect(chunks).toBeGreaterThan(2);
      expect(largest).toBeLessThanOrEqual(4 * 1024 * 1024);
      // finalize's use: one pass of hashStream over read().
      const d = await hashStream(await s.read(key));
      expect(d.size).toBe(size);
      expect(d.sha256Hex).toBe(createHash("sha256").update(data).digest("hex"));
    });

    test("cancelling a read part-way releases the object (no full drain)", async () => {
      const key = uniqueKey("cancel.bin");
      await upload(key, new Uint8Array(randomBytes(6 * 1024 * 1024)));
      const reader = (await s.read(key)).getReader();
      const first = await reader.read();
      expect(first.done).toBe(false);
      expect(first.value!.byteLength).toBeLessThan(6 * 1024 * 1024);
      await reader.cancel();
    });

    test("move: the bytes arrive under the new key, the old key is gone, observe sees exactly them", async () => {
      const from = uniqueKey("staged.bin");
      const to = uniqueKey("final.bin");
      const data = new Uint8Array(randomBytes(200_003));
      await upload(from, data);
      await s.put(to, new Uint8Array([9, 9]), "application/octet-stream"); // replaced
      const seen: Uint8Array[] = [];
      expect(await s.move(from, to, { contentType: "application/zip", observe: (c) => seen.push(c.slice()) })).toEqual({ size: data.length });
      expect(Buffer.concat(seen).equals(data)).toBe(true);
      expect(await s.stat(from)).toBeNull();
      expect((await readAll(await s.read(to))).bytes.equals(data)).toBe(true);
      // Without an observer too; an empty object moves.
      const empty = uniqueKey("empty.bin");
      await s.put(empty, new Uint8Array(0), "text/plain");
      expect(await s.move(empty, uniqueKey("empty2.bin"), { contentType: "text/plain" })).toEqual({ size: 0 });
    });

    test("move of a missing object is NOT_FOUND and leaves the target alone", async () => {
      const to = uniqueKey("kept.bin");
      await s.put(to, new Uint8Array([1, 2, 3]), "application/octet-stream");
      expect(await errorCode(s.move(uniqueKey("nothing.bin"), to, { contentType: "application/octet-stream" }))).toBe("NOT_FOUND");
      expect((await readAll(await s.read(to))).bytes).toEqual(Buffer.from([1, 2, 3]));
      expect(await errorCode(s.move("../x", to, { contentType: "text/plain" }))).toBe("VALIDATION_ERROR");
    });

    test("a multi-MB move streams in bounded chunks (several S3 parts)", async () => {
      const from = uniqueKey("big-staged.bin");
      const to = uniqueKey("big-final.bin");
      const size = 12 * 1024 * 1024 + 5;
      const data = new Uint8Array(randomBytes(size));
      await upload(from, data);
      const hash = createHash("sha256");
      let largest = 0;
      await s.move(from, to, {
        contentType: "application/octet-stream",
        observe: (c) => {
          hash.update(c);
          largest = Math.max(largest, c.byteLength);
        },
      });
      expect(hash.digest("hex")).toBe(createHash("sha256").update(data).digest("hex"));
      expect(largest).toBeLessThanOrEqual(4 * 1024 * 1024);
      expect(await s.stat(to)).toEqual({ size });
      expect(createHash("sha256").update((await readAll(await s.read(to))).bytes).digest("hex")).toBe(
        createHash("sha256").update(data).digest("hex"),
      );
    });

    test("ready: the store answers", async () => {
      expect(await s.ready()).toEqual({ status: "ok" });
    });

    test("re-uploading a key replaces the object", async () => {
      const key = uniqueKey("replace.bin");
      await upload(key, new Uint8Array([1, 2, 3]));
      await upload(key, new Uint8Array([4, 5]));
      expect((await readAll(await s.read(key))).bytes).toEqual(Buffer.from([4, 5]));
    });
  });
}
