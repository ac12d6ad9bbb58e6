// Floating (concurrent-use) licenses (spec: Floating session table, License rule 4; DECISIONS: Floating).
import type { Deps } from "../../deps";
import { AppError } from "../../shared/errors";
import { MINUTE } from "../../shared/clock";
import type { Actor } from "../../shared/actor";
import { getLicense } from "../licenses/service";
import { assertStorableIdentifier, isUsableAccess, licenseNotFound, requireUsableLicense, type PublicLicenseInput } from "../license-api/access";
import type { LicenseAccess } from "../license-api/repo";
import type { FloatingLimits, FloatingSession } from "./repo";
import type { Recorder } from "../idempotency/repo";
import type { Effects } from "../outbox/effects";
import { floatingCheckedIn, floatingCheckedOut, floatingExpired } from "./events";
import { drain, PRUNE_LIMITS } from "../../shared/batches";

export interface FloatingInput extends PublicLicenseInput {
  identifier: string;
}

export interface FloatingView {
  session: FloatingSession;
  active: number;
  /** The plan's max_activations; null = unlimited. */
  max: number | null;
}

/**
 * Floating sessions exist only on plans with floating = true. A usable key on another plan gets 403:
 * the caller holds a working key, so naming the reason reveals nothing it could not see in its
 * entitlements, while unusable or unknown keys still get the collapsed 404.
 */
function limitsFor(access: LicenseAccess | null, now: Date): FloatingLimits {
  if (!access || !isUsableAccess(access, now)) throw licenseNotFound();
  if (!access.plan.floating) {
    throw new AppError("FORBIDDEN", { message: "This license's plan does not offer floating sessions." });
  }
  return { max: access.plan.maxActivations, timeoutMs: access.plan.floatingTimeout * MINUTE };
}

/**
 * `record` (Idempotency-Key) receives the view inside the checkout's write transaction: the session
 * and the stored outcome commit together.
 */
export async function checkout(deps: Deps, input: FloatingInput & { label: string | null }, record?: Recorder<FloatingView>): Promise<FloatingView> {
  assertStorableIdentifier(input.identifier);
  const now = deps.clock.now();
  const access = await requireUsableLicense(deps, input, now);
  limitsFor(access, now);
  const outcome = await deps.repos.floating.checkout(
    { licenseId: access.license.id, identifier: input.identifier, label: input.label, at: now },
    (current) => limitsFor(current, now),
    record && ((o) => record({ session: o.session, active: o.active, max: o.max })),
    ({ outcome: o, opened, expired }): Effects => ({
      // A refresh of the identifier's live session is not an event; sessions this checkout found
      // expired are (the expire-floating pass will not see them again).
      events: [
        ...expired.map((s) => floatingExpired(s, access.license.productId, now)),
        ...(o.kind === "ok" && opened ? [floatingCheckedOut(o.session, access.license.productId, o.active, o.max, now)] : []),
      ],
    }),
  );
  if (outcome.kind === "limit") {
    throw new AppError("FLOATING_LIMIT", {
      message: "All floating sessions of this license are in use. Retry when one is released or expires.",
      details: { active_sessions: outcome.active, max_sessions: outcome.max },
    });
  }
  return { session: outcome.session, active: outcome.active, max: outcome.max };
}

/**
 * Heartbeat and checkin need key + identifier, like verify and deactivate, and collapse the same way:
 * no live session for the identifier (never opened, released, or expired) is the same 404 as an
 * unknown key. An expired session is never revived (DECISIONS: Floating): the client checks out again.
 */
export async function heartbeat(deps: Deps, input: FloatingInput): Promise<FloatingView> {
  const now = deps.clock.now();
  const access = await requireUsableLicense(deps, input, now);
  const expiresAt = new Date(now.getTime() + access.plan.floatingTimeout * MINUTE);
  const r = await deps.repos.floating.heartbeat(access.license.id, input.identifier, now, expiresAt);
  if (!r) throw licenseNotFound();
  return { ...r, max: access.plan.maxActivations };
}

export async function checkin(deps: Deps, input: FloatingInput): Promise<FloatingView> {
  const now = deps.clock.now();
  const access = await requireUsableLicense(deps, input, now);
  const r = await deps.repos.floating.checkin(access.license.id, input.identifier, now, ({ session, active }) => ({
    events: [floatingCheckedIn(session, access.license.productId, active, now)],
  }));
  if (!r) throw licenseNotFound();
  return { ...r, max: access.plan.maxActivations };
}

/**
 * The expire-floating job pass: deletes sessions that expired before `now`, with their floating.expired
 * events, in batches (each one transaction with its events) that yield in between; a backlog past
 * PRUNE_MAX_BATCHES batches is left to the next minute's run.
 */
export async function expireFloatingSessions(deps: Pick<Deps, "repos">, now: Date): Promise<number> {
  const run = await drain(PRUNE_LIMITS, async (n) => {
    const gone = await deps.repos.floating.expire(now, n, (expired) => ({
      events: expired.map(({ session, productId }) => floatingExpired(session, productId, now)),
    }));
    return gone.length;
  });
  return run.deleted;
}

/** Live sessions of a license, oldest first; for the admin license detail (lead merges it there). */
export async function listActiveFloatingSessions(deps: Deps, licenseId: string): Promise<FloatingSession[]> {
  return await deps.repos.floating.listActive(licenseId, deps.clock.now());
}

export async function adminFloatingSessions(deps: Deps, actor: Actor, licenseId: string): Promise<FloatingSession[]> {
  await getLicense(deps, actor, licenseId); // 404 NOT_FOUND, or 403 PRODUCT_SCOPE_MISMATCH for a bound key
  return await listActiveFloatingSessions(deps, licenseId);
}
