// One error type with a closed code registry. The HTTP status of every code lives here and only here;
// services throw AppError(code) with no HTTP knowledge, the error handler maps it to the envelope.
export const ERROR_CODES = {
  VALIDATION_ERROR: 400,
  INVALID_IDEMPOTENCY_KEY: 400,
  SIGN_IN_CODE_INVALID: 400,
  OAUTH_STATE_MISMATCH: 400,
  OAUTH_FAILED: 400,
  STRIPE_SIGNATURE_INVALID: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  CROSS_SITE_REQUEST: 403,
  INSUFFICIENT_SCOPE: 403,
  PRODUCT_SCOPE_MISMATCH: 403,
  LICENSE_INACTIVE: 403,
  SUPPORT_EXPIRED: 403,
  OAUTH_EMAIL_UNVERIFIED: 403,
  NOT_FOUND: 404,
  LICENSE_NOT_FOUND: 404,
  SEAT_INVITE_INVALID: 404,
  RELEASE_NOT_FOUND: 404,
  PLAN_NOT_FOUND: 404,
  ACTIVATION_LIMIT: 409,
  FLOATING_LIMIT: 409,
  SEAT_LIMIT: 409,
  IDEMPOTENCY_IN_FLIGHT: 409,
  INVALID_TRANSITION: 409,
  CONFLICT: 409,
  USER_MANAGED_BY_CONFIG: 409,
  LAST_ADMIN: 409,
  WEBHOOK_DISABLED: 409,
  NOTHING_TO_REFUND: 409,
  REFUND_FAILED: 409,
  RELEASE_YANKED: 410,
  PAYLOAD_TOO_LARGE: 413,
  IDEMPOTENCY_KEY_CONFLICT: 422,
  LOCKED_OUT: 429,
  QUOTA_EXCEEDED: 429,
  RATE_LIMITED: 429,
  INTERNAL_ERROR: 500,
  PAYMENT_PROVIDER_ERROR: 502,
  RENEWAL_NOT_AVAILABLE: 503,
  PURCHASE_NOT_AVAILABLE: 503,
  PAYMENTS_NOT_CONFIGURED: 503,
  STORAGE_DISABLED: 503,
  NOT_READY: 503,
  DATABASE_UNAVAILABLE: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

const DEFAULT_MESSAGES: Partial<Record<ErrorCode, string>> = {
  VALIDATION_ERROR: "The request is invalid.",
  UNAUTHORIZED: "Authentication is required.",
  FORBIDDEN: "You are not allowed to do this.",
  INSUFFICIENT_SCOPE: "The API key lacks the scope this route needs.",
  PRODUCT_SCOPE_MISMATCH: "The API key is bound to another product.",
  NOT_FOUND: "Not found.",
  SIGN_IN_CODE_INVALID: "The sign-in code is wrong, expired or used up. Ask for a new one.",
  CROSS_SITE_REQUEST: "The request came from another site.",
  OAUTH_STATE_MISMATCH: "The sign-in attempt could not be matched to this browser; start again.",
  OAUTH_FAILED: "Sign-in with the provider failed; start again.",
  OAUTH_EMAIL_UNVERIFIED: "The provider did not confirm a verified email address for this account.",
  LICENSE_NOT_FOUND: "License not found.",
  SEAT_INVITE_INVALID: "This invite is not valid. Ask the license owner for a new one.",
  SEAT_LIMIT: "All seats of this license are taken.",
  WEBHOOK_DISABLED: "The webhook endpoint is disabled; enable it first.",
  INTERNAL_ERROR: "An internal error occurred.",
  STORAGE_DISABLED: "Object storage is not configured.",
  PLAN_NOT_FOUND: "Plan not found.",
  PURCHASE_NOT_AVAILABLE: "This plan is not for sale.",
  STRIPE_SIGNATURE_INVALID: "The Stripe-Signature header does not verify against the request body.",
  PAYMENTS_NOT_CONFIGURED: "Stripe payments are not configured on this server.",
  PAYMENT_PROVIDER_ERROR: "The payment provider could not be reached; retry later.",
  RENEWAL_NOT_AVAILABLE: "Support renewal is not available for this license.",
  NOT_READY: "The service is not ready.",
  DATABASE_UNAVAILABLE: "The database is unavailable; retry shortly.",
  NOTHING_TO_REFUND: "The license has no payment to refund.",
};

export interface AppErrorOptions {
  message?: string;
  details?: Record<string, unknown> | null;
  /** When a retry may succeed; the HTTP layer sends it as `Retry-After`. */
  retryAfterSeconds?: number;
}

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly details: Record<string, unknown> | null;
  /** Seconds until a retry may succeed (429 and 409 in-flight refusals), or null. */
  readonly retryAfterSeconds: number | null;

  constructor(code: ErrorCode, options: AppErrorOptions = {}) {
    super(options.message ?? DEFAULT_MESSAGES[code] ?? code.toLowerCase().replaceAll("_", " "));
    this.name = "AppError";
    this.code = code;
    this.status = ERROR_CODES[code];
    this.details = options.details ?? null;
    this.retryAfterSeconds = options.retryAfterSeconds ?? null;
  }
}

export function isAppError(e: unknown): e is AppError {
  return e instanceof AppError;
}

/** A field-level validation failure, shaped like the handler's schema errors. */
export function validationError(fields: Record<string, string>, message?: string): AppError {
  return new AppError("VALIDATION_ERROR", {
    message: message ?? "The request is invalid.",
    details: { fields },
  });
}
