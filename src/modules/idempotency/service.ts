// Idempotency-Key for the public routes that change state: activate, usage, floating checkout
// (spec: design rule 5, Limits, Errors; DECISIONS: Idempotency). One reusable wrapper: the route
// passes its name, the license key and a synchronous `run`; this claims the key, runs once, stores
// the outcome and replays it to every retry with `Idempotent-Replayed: true`.
import type { Deps } from "../../deps";
import { AppError, isAppError, type ErrorCode } from "../../shared/errors";
import { DAY, MINUTE } from "../../shared/clock";
import { seal, openText } from "../../crypto/aead";
import { sha256Hex } from "../../crypto/hash";
import { normalizeLicenseKey } from "../../crypto/license-key";
import { requestContext } from "../../http/request-context";
import { errorBodyJson } from "../../http/error-handler";
import { licenseKeyHash } from "../licenses/service";
import type { IdempotencyScope } from "./repo";

export const IDEMPOTENCY_HEADER = "idempotency-key";
export const MAX_IDEMPOTENCY_KEY_LENGTH = 256;
/** Spec: Limits — replay window 24 hours; older rows are pruned. */
export const IDEMPOTENCY_WINDOW_MS = DAY;
/**
 * Our handlers run synchronously (SQLite + signing, no awaits), so a claim is normally completed
 * within milliseconds. An in-flight claim older than this was left by a process that died mid-request;
 * it is taken over instead of answering 409 for a whole day.
 */
export const STALE_CLAIM_MS = MINUTE;

/**
 * Refusals that say "not now" rather than describe the request's outcome: storing them would replay
 * a temporary state for 24 hours, so they free the key like a 5xx does.
 */
const TRANSIENT: ReadonlySet<ErrorCode> = new Set<ErrorCode>(["LOCKED_OUT", "RATE_LIMITED"]);

const aad = (s: IdempotencyScope) => `idempotency\n${s.route}\n${s.scope}\n${s.key}`;

function replay(deps: Deps, s: IdempotencyScope, status: number, sealed: string): Response {
  return new Response(openText(deps.secrets.subkey("idempotencyResponseEncryption"), sealed, aad(s)), {
    status,
    headers: { "content-type": "application/json", "Idempotent-Replayed": "true" },
  });
}

/**
 * Runs `run` at most once per (Idempotency-Key, route, license key). Without the header it just runs.
 * `run` must be synchronous: it executes between the claim and the stored outcome.
 */
export function idempotent<T>(deps: Deps, request: Request, route: string, licenseKey: string, run: () => T): T | Response {
  const key = request.headers.get(IDEMPOTENCY_HEADER);
  if (key === null) return run();
  if (key.length === 0 || key.length > MAX_IDEMPOTENCY_KEY_LENGTH) {
    throw new AppError("INVALID_IDEMPOTENCY_KEY", {
      message: `Idempotency-Key must be 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} characters.`,
      details: { max_length: MAX_IDEMPOTENCY_KEY_LENGTH },
    });
  }
  // The scope holds the key's lookup hash, never the key; any string hashes, so a malformed key still
  // gets a scope and its (collapsed 404) outcome is replayed like any other.
  const s: IdempotencyScope = { key, route, scope: licenseKeyHash(deps, normalizeLicenseKey(licenseKey)) };
  const bodyHash = sha256Hex(requestContext(request).rawBody ?? "");
  const now = deps.clock.now();
  const repo = deps.repos.idempotency;
  const claim = repo.claim(s, bodyHash, now, new Date(now.getTime() - IDEMPOTENCY_WINDOW_MS), new Date(now.getTime() - STALE_CLAIM_MS));
  switch (claim.kind) {
    case "conflict":
      throw new AppError("IDEMPOTENCY_KEY_CONFLICT", {
        message: "This Idempotency-Key was already used with a different request body.",
      });
    case "in_flight":
      throw new AppError("IDEMPOTENCY_IN_FLIGHT", {
        message: "A request with this Idempotency-Key is still running. Retry with backoff.",
        headers: { "Retry-After": "1" },
      });
    case "replay":
      return replay(deps, s, claim.status, claim.responseSealed);
    case "claimed":
      break;
  }

  const store = (status: number, body: string) => {
    try {
      repo.complete(s, status, seal(deps.secrets.subkey("idempotencyResponseEncryption"), body, aad(s)), deps.clock.now());
    } catch (e) {
      // The effect happened; failing to store it must not leave the key stuck in flight.
      deps.logger.error("idempotency: storing the outcome failed", { route, error: e });
      repo.release(s);
    }
  };
  let result: T;
  try {
    result = run();
  } catch (e) {
    if (isAppError(e) && e.status >= 400 && e.status < 500 && !TRANSIENT.has(e.code)) {
      store(e.status, errorBodyJson(e.code, e.message, e.details));
    } else {
      repo.release(s);
    }
    throw e;
  }
  store(200, JSON.stringify(result));
  return result;
}

/** Deletes keys older than the replay window (also done on every claim); for a periodic job. */
export function pruneIdempotencyKeys(deps: Deps): number {
  return deps.repos.idempotency.prune(new Date(deps.clock.nowMs() - IDEMPOTENCY_WINDOW_MS));
}
