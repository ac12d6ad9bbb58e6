// Body parsing for JSON routes: the body must be application/json and well-formed, within the size
// limit. Routes that take raw bytes (local storage uploads) opt out with `parse: "none"`.
import { Elysia } from "elysia";
import { AppError } from "../shared/errors";
import { requestContext } from "./request-context";

export function jsonBodyParser(maxBytes: number) {
  return new Elysia({ name: "keyward/body" }).onParse({ as: "global" }, async ({ request, contentType }) => {
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
