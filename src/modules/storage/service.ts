// Verbs behind the local driver's URLs (STORAGE_DRIVER=local): Keyward plays the object store, so
// these check the URL's HMAC and expiry, then stream bytes to or from disk. No Elysia here.
import type { Deps } from "../../deps";
import { AppError } from "../../shared/errors";
import { assertArtifactUploadOpen } from "../releases/service";
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
  // A signed URL is not enough: a release artifact's key takes bytes only while the artifact is
  // pending (issue 8 point 3). Asked before the body streams and again just before it is committed,
  // so an upload that was under way when finalize ran does not land either.
  const open = () => assertArtifactUploadOpen(deps, grant.key);
  await open();
  return storage.write(grant, input.body, open);
}

export interface Download {
  /** The file, read lazily: the server streams it and never loads it whole. */
  body: Blob;
  size: number;
  filename: string | null;
  contentType: string;
}

export async function openDownload(deps: Deps, input: { rawKey: string; query: Query }): Promise<Download> {
  const storage = local(deps);
  const grant = storage.authorize("GET", decodeKey(input.rawKey), input.query, null);
  const obj = await storage.object(grant.key);
  if (!obj) throw new AppError("NOT_FOUND", { message: "Stored object not found." });
  return {
    body: obj.file,
    size: obj.size,
    filename: grant.filename,
    contentType: grant.contentType ?? "application/octet-stream",
  };
}
