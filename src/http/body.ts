// Body parsing for JSON routes: the body must be application/json, strict UTF-8 and well-formed JSON,
// within the size limit and the shape limits of json-limits.ts. Routes that take raw bytes (local
// storage uploads) are listed in `rawBodyPrefixes`: a route-level `parse: "none"` does not stop a
// global parse hook in Elysia 1.4, so the hook itself leaves their body unread (returning null marks
// the body as parsed and skips Elysia's default parsers, which would buffer it). The route then
// streams `request.body` and bounds it itself (the size its upload URL was signed for).
import { Elysia } from "elysia";
import type { Config } from "../config";
import { AppError } from "../shared/errors";
import { jsonShapeViolation, MAX_JSON_DEPTH, MAX_JSON_NODES, unstorableStringPath } from "./json-limits";
import { requestContext } from "./request-context";

/** Largest artifact the local driver's upload route accepts through Keyward (per upload, the signed size). */
export const LOCAL_UPLOAD_MAX_BYTES = 64 * 1024 * 1024 * 1024;
// Bun cuts a connection whose body passes maxRequestBodySize without an HTTP answer (chunked) or
// with a bare 413 (Content-Length). The margin lets the parser below answer first, in the envelope.
const SERVER_LIMIT_MARGIN = 64 * 1024;

/**
 * Bun.serve's maxRequestBodySize: the largest body any route accepts. Only the local storage upload
 * route takes more than MAX_BODY_BYTES; each route still enforces its own limit while reading.
 */
export function serverMaxRequestBodySize(config: Pick<Config, "maxBodyBytes" | "storage">): number {
  return config.storage.driver === "local" ? LOCAL_UPLOAD_MAX_BYTES : config.maxBodyBytes + SERVER_LIMIT_MARGIN;
}

const tooLarge = (maxBytes: number) =>
  new AppError("PAYLOAD_TOO_LARGE", { message: `Request bodies are limited to ${maxBytes} bytes.` });

const invalid = (message: string, fields: Record<string, string>) => new AppError("VALIDATION_ERROR", { message, details: { fields } });

/**
 * The body's bytes, never more than maxBytes + one chunk in memory. A Content-Length body is framed
 * by the server (never longer than declared); a chunked one is read as a stream and cancelled at the
 * limit, so a client cannot make the server buffer a body of any size before the check.
 */
function readBounded(request: Request, maxBytes: number): Promise<Uint8Array> {
  const declared = request.headers.get("content-length");
  if (declared !== null) {
    if (Number(declared) > maxBytes) throw tooLarge(maxBytes);
    return request.bytes();
  }
  return readChunks(request, maxBytes);
}

async function readChunks(request: Request, maxBytes: number): Promise<Uint8Array> {
  if (!request.body) return new Uint8Array(0);
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      // The server discards the rest of the body without buffering it.
      await reader.cancel().catch(() => undefined);
      throw tooLarge(maxBytes);
    }
    chunks.push(value);
  }
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, total);
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

export function jsonBodyParser(maxBytes: number, rawBodyPrefixes: readonly string[] = []) {
  // Not an async function: the body is read by one promise and parsed in its continuation (every
  // public SDK call comes through here, and an async wrapper per call is measurable).
  return new Elysia({ name: "keyward/body" }).onParse({ as: "global" }, ({ request, contentType, path }) => {
    if (rawBodyPrefixes.some((p) => path.startsWith(p))) return null;
    return readJsonBody(request, contentType, maxBytes);
  });
}

/**
 * A request's body read within `maxBytes` and parsed as strict JSON: what every JSON route gets
 * (also used as is by bench/verify-ladder-server.ts). May throw before returning its promise.
 */
export function readJsonBody(request: Request, contentType: string | undefined, maxBytes: number): Promise<unknown> {
  return readBounded(request, maxBytes).then((bytes) => parseJson(request, contentType, bytes));
}

function parseJson(request: Request, contentType: string | undefined, bytes: Uint8Array): unknown {
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    // Lossy decoding would store U+FFFD in place of the bytes sent (two identifiers could collide).
    throw invalid("The request body is not valid UTF-8.", { body: "invalid UTF-8" });
  }
  // The body stream is consumed here; Idempotency-Key handling needs the exact bytes to hash.
  requestContext(request).rawBody = text;
  if (text.length === 0) return {};
  const type = contentType === "application/json" ? contentType : (contentType ?? "").split(";")[0]!.trim().toLowerCase();
  if (type !== "application/json" && !type.endsWith("+json")) {
    throw invalid("Content-Type must be application/json.", { "content-type": `expected application/json, got ${type || "none"}` });
  }
  const shape = jsonShapeViolation(text);
  if (shape === "depth") throw invalid(`JSON bodies may nest at most ${MAX_JSON_DEPTH} levels deep.`, { body: `nested deeper than ${MAX_JSON_DEPTH} levels` });
  if (shape === "nodes") throw invalid(`JSON bodies may hold at most ${MAX_JSON_NODES} values.`, { body: `more than ${MAX_JSON_NODES} values` });
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw invalid("The request body is not valid JSON.", { body: "malformed JSON" });
  }
  const unstorable = unstorableStringPath(value, text);
  if (unstorable?.reason === "surrogate") {
    throw invalid("Strings in the request body must be valid Unicode.", { [unstorable.path]: "contains an unpaired UTF-16 surrogate (\\ud800-\\udfff escape)" });
  }
  if (unstorable?.reason === "nul") {
    throw invalid("Strings in the request body cannot contain U+0000.", { [unstorable.path]: "contains U+0000 (\\u0000 escape)" });
  }
  return value;
}
