// Local storage driver (the default): objects are files under STORAGE_LOCAL_DIR, and the "presigned"
// URLs are Keyward URLs carrying an expiry and an HMAC-SHA256 under the storageUrlSigning subkey,
// served by the storage routes (index.ts). DECISIONS: Releases and storage.
import { createHmac } from "node:crypto";
import { constants } from "node:fs";
import type * as Fs from "node:fs/promises";
import { dirname, join, sep } from "node:path";
import { boundedChunks } from "../../crypto/chunks";
import { constantTimeEqual } from "../../crypto/hash";
import type { Clock } from "../../shared/clock";
import { AppError } from "../../shared/errors";
import { newId } from "../../shared/ids";
import { isValidStorageKey, type ObjectInfo, type PresignedRequest, type Storage } from "./storage";

/** API_PREFIX + the storage route path (index.ts); a test fetches the presigned URLs, so a drift fails. */
export const LOCAL_OBJECTS_PATH = "/api/v1/storage/objects";

// node:fs/promises loads with the first storage operation, not at every start (about 2 ms of CPU there).
let fsPromises: Promise<typeof Fs> | undefined;
const fsp = () => (fsPromises ??= import("node:fs/promises"));

export interface LocalStorageOptions {
  dir: string;
  baseUrl: string;
  /** The storageUrlSigning subkey. */
  signingKey: Uint8Array;
  clock: Clock;
  putTtlSeconds: number;
  getTtlSeconds: number;
}

/** What a verified URL allows: the signed parameters, trusted from here on. */
export interface LocalGrant {
  key: string;
  /** PUT: declared size (the body must match), if the URL was issued with one. */
  size: number | null;
  /** GET: Content-Disposition filename and Content-Type to serve. */
  filename: string | null;
  contentType: string | null;
}

export interface LocalObject {
  file: Blob;
  size: number;
}

export interface LocalStorage extends Storage {
  readonly driver: "local";
  /** Checks signature and expiry of a request to a presigned URL; 403 FORBIDDEN otherwise. */
  authorize(method: "PUT" | "GET", key: string, query: Record<string, string | undefined>, contentType: string | null): LocalGrant;
  /**
   * Streams a body to a temp file, then renames it into place (readers never see a partial object).
   * `beforeCommit` runs once the body is on disk, just before the rename; if it throws, nothing lands.
   */
  write(grant: LocalGrant, body: ReadableStream<Uint8Array> | null, beforeCommit?: () => void | Promise<void>): Promise<ObjectInfo>;
  /** The object as a lazily read file; null when missing. */
  object(key: string): Promise<LocalObject | null>;
}

export function isLocalStorage(s: Storage): s is LocalStorage {
  return s.driver === "local" && "authorize" in s;
}

/**
 * The signed string: every parameter that changes what the URL allows, JSON-encoded so that no
 * value can be shifted into another field. PUT binds the Content-Type header the client must send.
 */
function canonical(method: "PUT" | "GET", key: string, expires: number, a: string, b: string): string {
  return JSON.stringify(["keyward-storage-v1", method, key, expires, a, b]);
}

function forbidden(message: string): AppError {
  return new AppError("FORBIDDEN", { message });
}

export function createLocalStorage(opts: LocalStorageOptions): LocalStorage {
  const { dir, clock } = opts;
  const tmpDir = join(dir, ".tmp");

  const mac = (data: string) => createHmac("sha256", opts.signingKey).update(data, "utf8").digest("base64url");

  const pathOf = (key: string): string => {
    if (!isValidStorageKey(key)) throw new AppError("VALIDATION_ERROR", { message: "Invalid storage key.", details: { fields: { key: "invalid" } } });
    const p = join(dir, ...key.split("/"));
    // Defence in depth: the key rule already excludes "..", but a path outside dir is never used.
    if (!p.startsWith(dir + sep)) throw new AppError("VALIDATION_ERROR", { message: "Invalid storage key." });
    return p;
  };

  const urlFor = (key: string, params: Record<string, string>): string => {
    const path = key.split("/").map(encodeURIComponent).join("/");
    return `${opts.baseUrl}${LOCAL_OBJECTS_PATH}/${path}?${new URLSearchParams(params).toString()}`;
  };

  const expiry = (ttl: number) => Math.floor(clock.nowMs() / 1000) + ttl;

  const statKey = async (key: string): Promise<ObjectInfo | null> => {
    try {
      const s = await (await fsp()).stat(pathOf(key));
      return s.isFile() ? { size: s.size } : null;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "ENOENT") return null;
      throw e;
    }
  };

  const objectOf = async (key: string): Promise<LocalObject | null> => {
    const s = await statKey(key);
    return s ? { file: Bun.file(pathOf(key)), size: s.size } : null;
  };

  return {
    driver: "local",

    async presignPut(key, { contentType, size, expiresInSeconds }) {
      pathOf(key);
      const expires = expiry(expiresInSeconds ?? opts.putTtlSeconds);
      const sizeText = size === undefined ? "" : String(size);
      const sig = mac(canonical("PUT", key, expires, contentType, sizeText));
      const params: Record<string, string> = { expires: String(expires) };
      if (size !== undefined) params.size = sizeText;
      params.sig = sig;
      return {
        url: urlFor(key, params),
        method: "PUT",
        headers: { "content-type": contentType },
        expiresAt: new Date(expires * 1000),
      } satisfies PresignedRequest;
    },

    async presignGet(key, o = {}) {
      pathOf(key);
      const expires = expiry(o.expiresInSeconds ?? opts.getTtlSeconds);
      const filename = o.filename ?? "";
      const type = o.contentType ?? "";
      const params: Record<string, string> = { expires: String(expires) };
      if (filename) params.filename = filename;
      if (type) params.type = type;
      params.sig = mac(canonical("GET", key, expires, filename, type));
      return { url: urlFor(key, params), method: "GET", headers: {}, expiresAt: new Date(expires * 1000) };
    },

    stat: statKey,

    async put(key, data, contentType) {
      return this.write({ key, size: data.byteLength, filename: null, contentType }, new Blob([data]).stream());
    },

    async read(key) {
      const obj = await objectOf(key);
      if (!obj) throw new AppError("NOT_FOUND", { message: "Stored object not found." });
      return obj.file.stream();
    },

    async delete(key) {
      await (await fsp()).rm(pathOf(key), { force: true });
    },

    authorize(method, key, query, contentType) {
      const expiresText = query.expires ?? "";
      const sig = query.sig ?? "";
      if (!/^\d{1,12}$/.test(expiresText) || sig === "") throw forbidden("The storage URL is not signed.");
      const expires = Number(expiresText);
      let a: string;
      let b: string;
      if (method === "PUT") {
        a = contentType ?? "";
        b = query.size ?? "";
      } else {
        a = query.filename ?? "";
        b = query.type ?? "";
      }
      // Signature first, so a tampered URL says nothing about expiry or whether the object exists.
      if (!constantTimeEqual(mac(canonical(method, key, expires, a, b)), sig)) {
        throw forbidden("The storage URL signature is invalid.");
      }
      if (clock.nowMs() > expires * 1000) throw forbidden("The storage URL has expired.");
      pathOf(key);
      return {
        key,
        size: method === "PUT" && b !== "" ? Number(b) : null,
        filename: method === "GET" && a !== "" ? a : null,
        contentType: method === "GET" ? b || null : a || null,
      };
    },

    async write(grant, body, beforeCommit) {
      const target = pathOf(grant.key);
      await (await fsp()).mkdir(tmpDir, { recursive: true });
      const tmp = join(tmpDir, newId());
      const fh = await (await fsp()).open(tmp, "wx", 0o600);
      let size = 0;
      let done = false;
      try {
        if (body) {
          // One chunk in memory at a time: each write is awaited before the next read.
          for await (const chunk of body) {
            size += chunk.byteLength;
            if (grant.size !== null && size > grant.size) {
              throw new AppError("PAYLOAD_TOO_LARGE", { message: `The upload URL was issued for ${grant.size} bytes.` });
            }
            await fh.write(chunk);
          }
        }
        if (grant.size !== null && size !== grant.size) {
          throw new AppError("VALIDATION_ERROR", {
            message: `The body has ${size} bytes; the upload URL was issued for ${grant.size}.`,
            details: { fields: { body: "size mismatch" } },
          });
        }
        await fh.sync();
        await fh.close();
        done = true;
        await beforeCommit?.();
        await (await fsp()).mkdir(dirname(target), { recursive: true });
        await (await fsp()).rename(tmp, target);
        return { size };
      } finally {
        if (!done) await fh.close().catch(() => undefined);
        await (await fsp()).rm(tmp, { force: true });
      }
    },

    async move(from, to, { observe }) {
      const source = pathOf(from);
      const target = pathOf(to);
      await (await fsp()).mkdir(dirname(target), { recursive: true });
      // rename(2) replaces the target atomically and keeps the inode: a later upload to `from` writes a
      // new temp file and renames it over `from`, so it can never reach the bytes now under `to`.
      try {
        await (await fsp()).rename(source, target);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === "ENOENT") throw new AppError("NOT_FOUND", { message: "Stored object not found." });
        throw e;
      }
      if (!observe) return (await statKey(to)) ?? { size: 0 };
      let size = 0;
      for await (const chunk of boundedChunks(Bun.file(target).stream())) {
        observe(chunk);
        size += chunk.byteLength;
      }
      return { size };
    },

    async ready() {
      // Writable is what uploads need: creates the directory on a fresh install, then asks the kernel
      // (a read-only mount answers EROFS, missing permissions EACCES).
      try {
        await (await fsp()).mkdir(dir, { recursive: true });
        await (await fsp()).access(dir, constants.W_OK);
        return { status: "ok" };
      } catch (e) {
        return { status: "down", reason: (e as NodeJS.ErrnoException).code ?? "unavailable" };
      }
    },

    object: objectOf,
  };
}
