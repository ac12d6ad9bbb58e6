// Per-address brute-force protection for activate (spec: License rule 1 "Failed attempts feed a
// per-IP brute-force lockout"; Limits). The address comes from the request context: the socket
// address, or the X-Forwarded-For entry trusted proxies appended when TRUST_PROXY is set
// (src/http/trusted-proxies.ts).
import type { Deps } from "../../deps";
import { AppError } from "../../shared/errors";
import { SECOND } from "../../shared/clock";
import { afterFailure, lockoutRemainingMs, REPEAT_MEMORY_MS, type BruteForcePolicy } from "./domain";

function policy(deps: Deps): BruteForcePolicy {
  return {
    maxFails: deps.config.bfMaxFails,
    windowMs: deps.config.bfWindowSeconds * SECOND,
    baseLockoutMs: deps.config.bfLockoutSeconds * SECOND,
  };
}

/** 429 LOCKED_OUT with Retry-After while the address is locked; checked before any key lookup. */
export async function assertNotLockedOut(deps: Deps, ip: string, now: Date): Promise<void> {
  const remainingMs = lockoutRemainingMs(await deps.repos.bruteForce.get(ip), now);
  if (remainingMs > 0) {
    const seconds = Math.ceil(remainingMs / SECOND);
    throw new AppError("LOCKED_OUT", {
      message: "Too many failed activation attempts from this address. Retry later.",
      details: { retry_after_seconds: seconds },
      retryAfterSeconds: seconds,
    });
  }
}

/** Counts one failed lookup (unknown, malformed or other-product key) against the address. */
export async function recordFailedLookup(deps: Deps, ip: string, now: Date): Promise<void> {
  const p = policy(deps);
  await deps.repos.bruteForce.recordFailure(ip, (current) => afterFailure(ip, current, now, p), new Date(now.getTime() - REPEAT_MEMORY_MS));
}
