// Maps every failure to the spec's error envelope with a stable code. A database that cannot answer
// right now (connection lost or refused, server restarting, lock timeout) is 503 DATABASE_UNAVAILABLE
// with Retry-After; other unexpected errors become 500 INTERNAL_ERROR with a fixed message. The
// cause is logged with the request id, never echoed.
import { Elysia, ValidationError } from "elysia";
import { AppError, ERROR_CODES, isAppError, type ErrorCode } from "../shared/errors";
import type { Logger } from "../shared/logger";
import { databaseSetupHint, isDatabaseUnavailable } from "../db/errors";
import { requestContext } from "./request-context";
import { describeQueryInteger, QUERY_INTEGER_KIND } from "./schema";

const TYPEBOX_KIND = Symbol.for("TypeBox.Kind");

/** Retry-After of a 503 DATABASE_UNAVAILABLE: a node reconnects within about 2 s (db/pg.ts, reconnectDelaySeconds). */
export const DATABASE_RETRY_AFTER_SECONDS = 2;

/** The error body as sent (spec: Errors). Also used to store 4xx outcomes for idempotent replay. */
export function errorBodyJson(code: ErrorCode, message: string, details: Record<string, unknown> | null): string {
  return JSON.stringify({ success: false, error: { code, message, details } });
}

export function errorResponse(
  request: Request,
  code: ErrorCode,
  message: string,
  details: Record<string, unknown> | null,
  headers: Record<string, string> = {},
): Response {
  const ctx = requestContext(request);
  const { requestId } = ctx;
  ctx.status = ERROR_CODES[code];
  return new Response(errorBodyJson(code, message, details), {
    status: ERROR_CODES[code],
    headers: { "content-type": "application/json", "x-request-id": requestId, ...headers },
  });
}

/**
 * Where a response failed its schema, for the log: JSON pointers and TypeBox's messages only. The
 * ValidationError's own message embeds the whole response value ("found"), which on license routes
 * holds a plaintext license key or a signed token, and logs must never carry those (docs/security.md).
 */
function responseFailures(error: ValidationError): { path: string; message: string }[] {
  try {
    return (error.all as { path?: string; message?: string }[]).map((e) => ({ path: e.path ?? "", message: e.message ?? "invalid" }));
  } catch {
    return [];
  }
}

function validationFields(error: ValidationError): Record<string, string> {
  const fields: Record<string, string> = {};
  let all: { path?: string; message?: string; summary?: string; schema?: Record<string | symbol, unknown> }[] = [];
  try {
    all = error.all as unknown as typeof all;
  } catch {
    all = [];
  }
  for (const e of all) {
    const path = (e.path ?? "").replace(/^\//, "").replaceAll("/", ".") || error.type;
    const queryInteger = e.schema?.[TYPEBOX_KIND] === QUERY_INTEGER_KIND;
    if (!(path in fields)) fields[path] = queryInteger ? describeQueryInteger(e.schema!) : (e.summary ?? e.message ?? "invalid");
  }
  if (Object.keys(fields).length === 0) fields[error.type] = "invalid";
  return fields;
}

export function errorHandler(logger: Logger) {
  return new Elysia({ name: "keyward/error-handler" }).onError({ as: "global" }, ({ code, error, request }) => {
    // Errors thrown by our body parser arrive wrapped in Elysia's ParseError.
    const appError = isAppError(error) ? error : isAppError((error as Error | undefined)?.cause) ? ((error as Error).cause as AppError) : null;
    if (appError) {
      const headers: Record<string, string> = appError.retryAfterSeconds === null ? {} : { "retry-after": String(appError.retryAfterSeconds) };
      return errorResponse(request, appError.code, appError.message, appError.details, headers);
    }
    if (code === "VALIDATION" && error instanceof ValidationError) {
      const where = error.type === "response" ? null : error.type;
      if (where === null) {
        // A response that fails its own schema is our bug, not the caller's.
        logger.error("response validation failed", { requestId: requestContext(request).requestId, failures: responseFailures(error) });
        return errorResponse(request, "INTERNAL_ERROR", "An internal error occurred.", null);
      }
      return errorResponse(request, "VALIDATION_ERROR", `Invalid request ${where}.`, {
        fields: validationFields(error),
      });
    }
    if (code === "PARSE") {
      return errorResponse(request, "VALIDATION_ERROR", "The request body could not be parsed.", {
        fields: { body: "malformed" },
      });
    }
    if (code === "NOT_FOUND") {
      return errorResponse(request, "NOT_FOUND", "No route matches this request.", null);
    }
    if (isDatabaseUnavailable(error)) {
      logger.warn("database unavailable", { requestId: requestContext(request).requestId, error });
      return errorResponse(request, "DATABASE_UNAVAILABLE", "The database is unavailable; retry shortly.", null, {
        "retry-after": String(DATABASE_RETRY_AFTER_SECONDS),
      });
    }
    const hint = databaseSetupHint(error);
    logger.error("unhandled error", { requestId: requestContext(request).requestId, code, error, ...(hint ? { hint } : {}) });
    return errorResponse(request, "INTERNAL_ERROR", "An internal error occurred.", null);
  });
}

export { AppError };
