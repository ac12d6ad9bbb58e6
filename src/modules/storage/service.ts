// Verbs behind the local driver's URLs (STORAGE_DRIVER=local): Keyward plays the object store, so
// these check the URL's HMAC and expiry, then stream bytes to or from disk. No Elysia here.
import type { Deps } from "../../deps";
import { AppError } from "../../shared/errors";
import { isLocalStorage, type LocalStorage } from "./local";
import type { ObjectInfo } from "./storage";

type Query = Record<string, string | undefined>;

function local(deps: Deps): LocalStorage {
  // The routes are mounted only for the local driver; this guards a miswired app.
  if (!isLocalStorage(deps.storage)) throw new AppError("NOT_FOUND");
  return deps.storage;
}

/** The key from the URL path: percent-decoded per segment, as urlFor in local.ts encoded it. */
function decodeKey(raw: string): string {
  try {
    return raw.split("/").map(decodeURIComponent).join("/");
  } catch {
    throw new AppError("FORBIDDEN", { message: "The storage URL signature is invalid." });
  }
}

export async function receiveUpload(
  deps: Deps,
  input: { rawKey: string; query: Query; contentType: string | null; body: ReadableStream<Uint8Array> | null },
): Promise<ObjectInfo> {
  const storage = local(deps);
  const grant = storage.authorize("PUT", decodeKey(input.rawKey), input.query, input.contentType);
  return storage.write(grant, input.body);
}

export interface Download {
  body: Blob;
  /** Bytes in `body`. */
  length: number;
  /** Set when a single byte range was served (206). */
  range: { start: number; end: number; total: number } | null;
  filename: string | null;
  contentType: string;
}

/**
 * A single satisfiable `bytes=` range, or null. Anything else (multiple ranges, garbage, beyond the
 * end) is ignored and the whole object is served, which RFC 9110 §14.2 allows a server to do.
 */
export function parseRange(header: string | null, size: number): { start: number; end: number } | null {
  const m = header ? /^bytes=(\d*)-(\d*)$/.exec(header.trim()) : null;
  if (!m || (m[1] === "" && m[2] === "") || size === 0) return null;
  let start: number;
  let end: number;
  if (m[1] === "") {
    const suffix = Number(m[2]);
    if (suffix === 0) return null;
    start = Math.max(0, size - suffix);
    end = size - 1;
  } else {
    start = Number(m[1]);
    end = m[2] === "" ? size - 1 : Math.min(Number(m[2]), size - 1);
  }
  if (start > end || start >= size) return null;
  return { start, end };
}

export async function openDownload(deps: Deps, input: { rawKey: string; query: Query; range: string | null }): Promise<Download> {
  const storage = local(deps);
  const grant = storage.authorize("GET", decodeKey(input.rawKey), input.query, null);
  const obj = await storage.object(grant.key);
  if (!obj) throw new AppError("NOT_FOUND", { message: "Stored object not found." });
  const range = parseRange(input.range, obj.size);
  return {
    // Blob slices of a Bun.file are read lazily and streamed by the server, never loaded whole.
    body: range ? obj.file.slice(range.start, range.end + 1) : obj.file,
    length: range ? range.end - range.start + 1 : obj.size,
    range: range ? { ...range, total: obj.size } : null,
    filename: grant.filename,
    contentType: grant.contentType ?? "application/octet-stream",
  };
}
