// S3-compatible driver on Bun's built-in S3 client. Clients upload and download directly with
// SigV4-presigned URLs; Keyward itself only streams objects (finalize hashing, publish signing).
import { boundedChunks } from "../../crypto/chunks";
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

/**
 * Multipart part size for move: the writer is flushed after each part, which is what bounds memory.
 * Bun's NetworkSink.write never pushes back (it buffers): measured against s3rver, an unflushed
 * 300 MB write grew RSS by 545 MB; flushed every part, a 200 MB and a 600 MB move both stayed under
 * +40 MB. 5 MiB is S3's minimum part size.
 */
const MOVE_PART_BYTES = 5 * 1024 * 1024;

const READY_PROBE_PREFIX = ".keyward-readiness/";

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

    async move(from, to, { contentType, observe }) {
      checkKey(to);
      const source = await this.read(from);
      const writer = client.file(to).writer({ type: contentType, partSize: MOVE_PART_BYTES, queueSize: 2 });
      let size = 0;
      let unflushed = 0;
      try {
        for await (const chunk of boundedChunks(source)) {
          observe?.(chunk);
          writer.write(chunk);
          size += chunk.byteLength;
          unflushed += chunk.byteLength;
          if (unflushed >= MOVE_PART_BYTES) {
            unflushed = 0;
            await writer.flush();
          }
        }
        await writer.end();
      } catch (e) {
        // Aborts the multipart upload: `to` keeps what it had, no half-written object appears.
        await Promise.resolve(writer.end(e instanceof Error ? e : new Error(String(e)))).catch(() => undefined);
        throw e;
      }
      await this.delete(from);
      return { size };
    },

    async ready() {
      // ListObjectsV2 under a prefix no object has (keys never start with "."; storage.ts): one small
      // request with an empty answer that still proves the endpoint answers, the bucket exists and the
      // credentials are accepted. It needs s3:ListBucket, as HeadBucket would. (Also: s3rver answers
      // a truncated listing with InternalError, so max-keys alone would fail against a busy bucket.)
      try {
        await client.list({ prefix: READY_PROBE_PREFIX, maxKeys: 1 });
        return { status: "ok" };
      } catch (e) {
        const code = (e as { code?: unknown } | null)?.code;
        return { status: "down", reason: typeof code === "string" && /^[A-Za-z0-9_.-]{1,64}$/.test(code) ? code : "unavailable" };
      }
    },
  };
}
