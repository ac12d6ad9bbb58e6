// The object-storage port. Release artifacts are uploaded and downloaded through presigned URLs so
// multi-GB bodies never pass through an admin JSON route; the server itself only streams objects
// (finalize hashing, publish signing). Drivers: local (default), s3, none (DECISIONS: Releases and storage).

export interface PresignedRequest {
  url: string;
  method: "PUT" | "GET";
  /** Headers the client must send with the request (e.g. Content-Type for a presigned PUT). */
  headers: Record<string, string>;
  expiresAt: Date;
}

export interface ObjectInfo {
  size: number;
}

/**
 * Readiness of the object store (GET /health/ready): `not_configured` for STORAGE_DRIVER=none (no
 * storage is not an outage), `down` with a short machine-readable reason (an error code such as
 * `ConnectionRefused`, `NoSuchBucket`, `EROFS`; never a message, URL or credential).
 */
export type StorageReadiness = { status: "ok" | "not_configured" } | { status: "down"; reason: string };

export interface Storage {
  readonly driver: "local" | "s3" | "none";
  /** Throws AppError STORAGE_DISABLED for "none". */
  presignPut(key: string, opts: { contentType: string; size?: number; expiresInSeconds?: number }): Promise<PresignedRequest>;
  presignGet(
    key: string,
    opts?: { expiresInSeconds?: number; filename?: string; contentType?: string },
  ): Promise<PresignedRequest>;
  /** null when the object does not exist. */
  stat(key: string): Promise<ObjectInfo | null>;
  /**
   * Server-side write of a small object (e.g. `keyward demo`). Artifacts from clients go through
   * presignPut so their bytes never pass through the server's memory.
   */
  put(key: string, data: Uint8Array, contentType: string): Promise<ObjectInfo>;
  /** Streams the object; never buffers it whole. Throws AppError NOT_FOUND when it does not exist. */
  read(key: string): Promise<ReadableStream<Uint8Array>>;
  /** Deleting a missing object is not an error. */
  delete(key: string): Promise<void>;
  /**
   * Moves an object to another key (replacing what is there); `from` no longer exists afterwards.
   * `observe` receives, in order, exactly the bytes stored under `to` (finalize hashes them), and
   * memory stays bounded whatever the size: local renames the file then reads it back; S3 has no
   * server-side copy in Bun's client, so the bytes stream through (a multipart upload flushed part
   * by part). Throws AppError NOT_FOUND when `from` does not exist.
   */
  move(from: string, to: string, opts: { contentType: string; observe?: (chunk: Uint8Array) => void }): Promise<ObjectInfo>;
  /** A cheap reachability probe for the readiness check; never throws. */
  ready(): Promise<StorageReadiness>;
}

/**
 * Object keys are chosen by Keyward (ids and safe filenames), never taken verbatim from a URL path
 * without this check: slash-separated segments of [A-Za-z0-9._~+=@,()-], none empty or starting
 * with "." (so no "..", no hidden files), at most 512 characters. The local driver maps keys to
 * paths, so this is what keeps a key inside the storage directory.
 */
const SEGMENT = /^[A-Za-z0-9_~+=@,()-][A-Za-z0-9._~+=@,()-]*$/;

export function isValidStorageKey(key: string): boolean {
  if (key.length === 0 || key.length > 512) return false;
  return key.split("/").every((s) => SEGMENT.test(s));
}
