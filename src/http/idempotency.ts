// Idempotency-Key, as HTTP middleware for the public routes that change state: activate, usage,
// floating checkout
// (spec: design rule 5, Limits, Errors; DECISIONS: Idempotency). One reusable wrapper: the route
// passes its name, the license key, its `run` and its presenter; this claims the key, runs
// once, stores the outcome in the effect's own transaction and replays it to every retry with
// `Idempotent-Replayed: true`.
import type { Deps } from "../deps";
import { AppError, isAppError, type ErrorCode } from "../shared/errors";
import { seal, openText } from "../crypto/aead";
import { sha256Hex } from "../crypto/hash";
import { requestContext } from "./request-context";
import { errorBodyJson } from "./error-handler";
import { keyHashOf } from "../modules/license-api/access";
import { crashPoint } from "../shared/fault";
import { IDEMPOTENCY_HEADER, IDEMPOTENCY_WINDOW_MS, MAX_IDEMPOTENCY_KEY_LENGTH, STALE_CLAIM_MS } from "../modules/idempotency/service";
import { ClaimLostError, type ClaimCompletion, type IdempotencyScope, type Recorder } from "../modules/idempotency/repo";

/**
 * Refusals that are not stored; they free the key like a 5xx does, and a retry runs again.
 * - LOCKED_OUT, RATE_LIMITED say "not now" rather than describe the request's outcome: storing them
 *   would replay a temporary state for 24 hours.
 * - LICENSE_NOT_FOUND, the collapsed 404 (spec: design rule 4): storing it let junk keys with fresh
 *   Idempotency-Keys grow the table by a sealed row each (~4 KB, 24 h). Nothing happened, so a
 *   retry that runs again is harmless and gets the same 404. Never storing it for any cause (unknown,
 *   revoked, another product's key) also keeps the collapse: a replay header on some 404s and not
 *   on others would tell existing keys from missing ones. Every cause pays the same claim and
 *   release, so the timing does not tell them apart either.
 */
const NOT_STORED: ReadonlySet<ErrorCode> = new Set<ErrorCode>(["LOCKED_OUT", "RATE_LIMITED", "LICENSE_NOT_FOUND"]);

const aad = (s: IdempotencyScope) => `idempotency\n${s.route}\n${s.scope}\n${s.key}`;

function replay(deps: Deps, s: IdempotencyScope, status: number, sealed: string): Response {
  return new Response(openText(deps.secrets.subkey("idempotencyResponseEncryption"), sealed, aad(s)), {
    status,
    headers: { "content-type": "application/json", "Idempotent-Replayed": "true" },
  });
}

/**
 * Runs `run` at most once per (Idempotency-Key, route, license key) and answers `present(result)`.
 * Without the header it just runs.
 *
 * Three steps, and why the outcome is not a step of its own (DECISIONS: Idempotency, "the stored
 * outcome is written in the same transaction as the effect"):
 *   1. claim — its own transaction: an in-flight row on the scope's primary key;
 *   2. effect + outcome — `run` receives `record` and hands it to the verb, which passes it to the
 *      one repository method doing the write; that method calls it inside its transaction, and
 *      `record` presents the result and stores it sealed on the claim row before the commit. A crash
 *      before the commit leaves neither (the claim goes stale and the retry runs once); a crash after
 *      it leaves both (the retry replays);
 *   3. refusals (4xx) have no effect and are stored afterwards in a transaction of their own.
 * `record` only writes if this request's claim is still in flight: a claim taken over as stale
 * (STALE_CLAIM_MS) belongs to the new claimer, and the late original's effect is rolled back with
 * 409 IDEMPOTENCY_IN_FLIGHT instead of applying a second time.
 */
export async function idempotent<R, B>(
  deps: Deps,
  request: Request,
  route: string,
  licenseKey: string,
  run: (record?: Recorder<NoInfer<R>>) => Promise<R>,
  present: (result: R) => B,
): Promise<B> {
  const key = request.headers.get(IDEMPOTENCY_HEADER);
  if (key === null) return present(await run());
  if (key.length === 0 || key.length > MAX_IDEMPOTENCY_KEY_LENGTH) {
    throw new AppError("INVALID_IDEMPOTENCY_KEY", {
      message: `Idempotency-Key must be 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} characters.`,
      details: { max_length: MAX_IDEMPOTENCY_KEY_LENGTH },
    });
  }
  // The scope holds the key's lookup hash, never the key. A string that cannot be a license key can
  // have no effect to protect (it gets the collapsed 404): no claim, no row.
  const scope = keyHashOf(deps, licenseKey);
  if (scope === null) return present(await run());
  const s: IdempotencyScope = { key, route, scope };
  const bodyHash = sha256Hex(requestContext(request).rawBody ?? "");
  const claimedAt = deps.clock.now();
  const repo = deps.repos.idempotency;
  const claim = await repo.claim(
    s,
    bodyHash,
    claimedAt,
    new Date(claimedAt.getTime() - IDEMPOTENCY_WINDOW_MS),
    new Date(claimedAt.getTime() - STALE_CLAIM_MS),
  );
  switch (claim.kind) {
    case "conflict":
      throw new AppError("IDEMPOTENCY_KEY_CONFLICT", {
        message: "This Idempotency-Key was already used with a different request body.",
      });
    case "in_flight":
      throw inFlight();
    case "replay":
      // A replay is the stored bytes as a Response, which Elysia sends as-is (no response schema
      // applies to a Response); typed as B so the route keeps its declared response types.
      return replay(deps, s, claim.status, claim.responseSealed) as unknown as B;
    case "claimed":
      break;
  }

  const sealed = (body: string) => seal(deps.secrets.subkey("idempotencyResponseEncryption"), body, aad(s));
  let recorded: { body: B } | null = null;
  // Called by the repository inside the effect's transaction, which stores what it returns on the
  // claim row (or throws ClaimLostError and rolls the effect back when the claim was taken over).
  const record = (result: R): ClaimCompletion => {
    const body = present(result);
    recorded = { body };
    return { scope: s, claimedAt, status: 200, responseSealed: sealed(JSON.stringify(body)), at: deps.clock.now() };
  };
  // Outcomes of requests that changed nothing, stored after the fact: a crash before this store
  // only means the retry runs again, which is harmless when there was no effect.
  const store = async (status: number, body: string) => {
    try {
      if (!(await repo.complete({ scope: s, claimedAt, status, responseSealed: sealed(body), at: deps.clock.now() }))) {
        deps.logger.warn("idempotency: the claim was taken over before the outcome was stored", { route });
      }
    } catch (e) {
      deps.logger.error("idempotency: storing the outcome failed", { route, error: e });
      await repo.release(s, claimedAt);
    }
  };

  let result: R;
  try {
    result = await run(record);
  } catch (e) {
    // A lost claim belongs to whoever took it over: leave its row alone.
    if (e instanceof ClaimLostError) throw inFlight();
    recorded = null;
    if (isAppError(e) && e.status >= 400 && e.status < 500 && !NOT_STORED.has(e.code)) {
      await store(e.status, errorBodyJson(e.code, e.message, e.details));
    } else {
      await repo.release(s, claimedAt);
    }
    throw e;
  }
  // The effect has committed (with its outcome, when it had one); the response is not written yet.
  crashPoint(deps.config, "after-idempotent-effect");
  const done = recorded as { body: B } | null;
  if (done) return done.body;
  // `run` succeeded without a write to attach the outcome to (no effect): store it now.
  const body = present(result);
  await store(200, JSON.stringify(body));
  return body;
}

function inFlight(): AppError {
  return new AppError("IDEMPOTENCY_IN_FLIGHT", {
    message: "A request with this Idempotency-Key is still running. Retry with backoff.",
    retryAfterSeconds: 1,
  });
}
