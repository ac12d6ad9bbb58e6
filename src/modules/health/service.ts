// Liveness and readiness (issue 8 point 14). Liveness answers "is the process serving and does its
// database answer" and stays cheap; readiness also probes object storage, for load balancers that
// should stop sending traffic to a node whose bucket is unreachable. No Elysia here.
import type { Deps } from "../../deps";
import { AppError } from "../../shared/errors";
import type { StorageReadiness } from "../storage/storage";

/**
 * Upper bound on the storage probe. A load balancer probes every few seconds with its own timeout
 * (AWS ALB: 5 s by default); answering 503 well within that beats being marked down for silence,
 * and a hung bucket request must not pile up behind the probes.
 */
export const STORAGE_PROBE_TIMEOUT_MS = 2000;

export type CheckStatus = "ok" | "down" | "not_configured";
export interface Readiness {
  database: CheckStatus;
  storage: CheckStatus;
}

export async function checkLiveness(deps: Deps): Promise<void> {
  try {
    await deps.db.ping();
  } catch (e) {
    deps.logger.error("health check: database unavailable", { error: e });
    throw new AppError("INTERNAL_ERROR", { message: "Database unavailable." });
  }
}

async function probeStorage(deps: Deps, timeoutMs: number): Promise<StorageReadiness> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<StorageReadiness>((resolve) => {
    timer = setTimeout(() => resolve({ status: "down", reason: "timeout" }), timeoutMs);
  });
  try {
    return await Promise.race([deps.storage.ready().catch((): StorageReadiness => ({ status: "down", reason: "unavailable" })), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * 200 when the database answers and storage is reachable (or not configured: STORAGE_DRIVER=none is
 * a choice, not an outage); otherwise 503 NOT_READY naming the failed checks. The reasons (error
 * codes such as ConnectionRefused or NoSuchBucket) go to the log, not to this public route.
 */
export async function checkReadiness(deps: Deps, timeoutMs = STORAGE_PROBE_TIMEOUT_MS): Promise<Readiness> {
  let database: CheckStatus = "ok";
  try {
    await deps.db.ping();
  } catch (e) {
    database = "down";
    deps.logger.warn("readiness: database unavailable", { error: e });
  }
  const s = await probeStorage(deps, timeoutMs);
  if (s.status === "down") deps.logger.warn("readiness: storage unavailable", { driver: deps.storage.driver, reason: s.reason });
  const result: Readiness = { database, storage: s.status };
  const failed = (Object.keys(result) as (keyof Readiness)[]).filter((k) => result[k] === "down");
  if (failed.length > 0) {
    throw new AppError("NOT_READY", {
      message: `Not ready: ${failed.join(" and ")} unavailable.`,
      details: { ...result, failed },
    });
  }
  return result;
}
