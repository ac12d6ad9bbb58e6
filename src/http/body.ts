// Body parsing for JSON routes: the body must be application/json and well-formed, within the size
// limit. Routes that take raw bytes (local storage uploads) are listed in `rawBodyPrefixes`: a
// route-level `parse: "none"` does not stop a global parse hook in Elysia 1.4, so the hook itself
// leaves their body unread (returning null marks the body as parsed and skips Elysia's default
// parsers, which would buffer it). The route then streams `request.body`.
import { Elysia } from "elysia";
import { AppError } from "../shared/errors";
import { requestContext } from "./request-context";

export function jsonBodyParser(maxBytes: number, rawBodyPrefixes: readonly string[] = []) {
  return new Elysia({ name: "keyward/body" }).onParse({ as: "global" }, async ({ request, contentType, path }) => {
    if (rawBodyPrefixes.some((p) => path.startsWith(p))) return null;
    const length = Number(request.headers.get("content-length") ?? "0");
    if (length > maxBytes) {
      throw new AppError("PAYLOAD_TOO_LARGE", { message: `Request bodies are limited to ${maxBytes} bytes.` });
    }
    const text = await request.text();
    // The body stream is consumed here; Idempotency-Key handling needs the exact bytes to hash.
    requestContext(request).rawBody = text;
    if (text.length === 0) return {};
    if (Buffer.byteLength(text) > maxBytes) {
      throw new AppError("PAYLOAD_TOO_LARGE", { message: `Request bodies are limited to ${maxBytes} bytes.` });
    }
    const type = (contentType ?? "").split(";")[0]!.trim().toLowerCase();
    if (type !== "application/json" && !type.endsWith("+json")) {
      throw new AppError("VALIDATION_ERROR", {
        message: "Content-Type must be application/json.",
        details: { fields: { "content-type": `expected application/json, got ${type || "none"}` } },
      });
    }
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw new AppError("VALIDATION_ERROR", {
        message: "The request body is not valid JSON.",
        details: { fields: { body: "malformed JSON" } },
      });
    }
  });
}
