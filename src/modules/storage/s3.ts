// S3-compatible driver on Bun's built-in S3 client. Clients upload and download directly with
// SigV4-presigned URLs; Keyward itself only streams objects (finalize hashing, publish signing).
import type { Clock } from "../../shared/clock";
import { AppError } from "../../shared/errors";
import { isValidStorageKey, type Storage } from "./storage";
import { contentDisposition } from "./disposition";

export interface S3StorageOptions {
  endpoint: string | null;
  bucket: string;
  accessKeyId: string;
  secretAccessKey: string;
  region: string;
  /** STORAGE_FORCE_PATH_STYLE: bucket in the path (MinIO, s3rver) rather than the host name. */
  forcePathStyle: boolean;
  clock: Clock;
  putTtlSeconds: number;
  getTtlSeconds: number;
}

function checkKey(key: string): void {
  if (!isValidStorageKey(key)) {
    throw new AppError("VALIDATION_ERROR", { message: "Invalid storage key.", details: { fields: { key: "invalid" } } });
  }
}

function isMissing(e: unknown): boolean {
  const code = (e as { code?: string } | null)?.code;
  return code === "NoSuchKey" || code === "NotFound" || code === "ENOENT";
}

export function createS3Storage(opts: S3StorageOptions): Storage {
  const client = new Bun.S3Client({
    ...(opts.endpoint ? { endpoint: opts.endpoint } : {}),
    bucket: opts.bucket,
    accessKeyId: opts.accessKeyId,
    secretAccessKey: opts.secretAccessKey,
    region: opts.region,
    virtualHostedStyle: !opts.forcePathStyle,
  });
  // Bun signs with the system time; expiresAt reports the same instant through the injected clock.
  const expiresAt = (ttl: number) => new Date(opts.clock.nowMs() + ttl * 1000);

  return {
    driver: "s3",

    async presignPut(key, { contentType, expiresInSeconds }) {
      checkKey(key);
      const ttl = expiresInSeconds ?? opts.putTtlSeconds;
      const url = client.presign(key, { method: "PUT", expiresIn: ttl, type: contentType });
      // The client sends the Content-Type so the object is stored with it; finalize measures the size.
      return { url, method: "PUT", headers: { "content-type": contentType }, expiresAt: expiresAt(ttl) };
    },

    async presignGet(key, o = {}) {
      checkKey(key);
      const ttl = o.expiresInSeconds ?? opts.getTtlSeconds;
      const url = client.presign(key, {
        method: "GET",
        expiresIn: ttl,
        ...(o.contentType ? { type: o.contentType } : {}),
        ...(o.filename ? { contentDisposition: contentDisposition(o.filename) } : {}),
      });
      return { url, method: "GET", headers: {}, expiresAt: expiresAt(ttl) };
    },

    async stat(key) {
      checkKey(key);
      try {
        const s = await client.file(key).stat();
        return { size: s.size };
      } catch (e) {
        if (isMissing(e)) return null;
        throw e;
      }
    },

    async put(key, data, contentType) {
      checkKey(key);
      await client.file(key).write(data, { type: contentType });
      return { size: data.byteLength };
    },

    async read(key) {
      checkKey(key);
      // Bun's stream fails lazily on the first pull; pull it here so a missing object is a
      // NOT_FOUND now instead of an error in the middle of the caller's loop.
      const reader = client.file(key).stream().getReader();
      type Chunk = Awaited<ReturnType<typeof reader.read>>;
      let first: Chunk;
      try {
        first = await reader.read();
      } catch (e) {
        if (isMissing(e)) throw new AppError("NOT_FOUND", { message: "Stored object not found." });
        throw e;
      }
      let pending: Chunk | null = first;
      return new ReadableStream<Uint8Array>({
        async pull(controller) {
          const next = pending ?? (await reader.read());
          pending = null;
          if (next.done) controller.close();
          else controller.enqueue(next.value);
        },
        cancel(reason) {
          return reader.cancel(reason);
        },
      });
    },

    async delete(key) {
      checkKey(key);
      try {
        await client.file(key).delete();
      } catch (e) {
        if (!isMissing(e)) throw e;
      }
    },
  };
}
