// Token and activation rules (DECISIONS: Signed token). Pure: no I/O; `now` and the nonce are passed in.
import { DAY } from "../../shared/clock";
import type { TokenClaims } from "../../crypto/token";
import { fingerprint } from "../../crypto/fingerprint";
import type { LicenseAccess } from "../license-api/repo";
import type { Effects } from "../outbox/effects";
import { hasEffects } from "../outbox/effects";
import type { ActivatedOutcome, ActivateOutcome, Activation, NewActivation } from "./repo";

const seconds = (ms: number) => Math.floor(ms / 1000);

/**
 * Online token expiry: iat + TOKEN_TTL, never later than valid_until + grace_days when the license
 * has an expiry, so a cached token cannot outlive the license it proves.
 */
export function onlineTokenExpiry(iat: number, ttlSeconds: number, validUntil: Date | null, graceDays: number): number {
  const byTtl = iat + ttlSeconds;
  if (validUntil === null) return byTtl;
  return Math.min(byTtl, seconds(validUntil.getTime() + graceDays * DAY));
}

export interface TokenInput {
  access: LicenseAccess;
  identifier: string;
  features: Record<string, boolean | string>;
  now: Date;
  ttlSeconds: number;
  kid: string;
  nonce: string;
}

export function onlineTokenClaims({ access, identifier, features, now, ttlSeconds, kid, nonce }: TokenInput): TokenClaims {
  const { license, plan } = access;
  const iat = seconds(now.getTime());
  return {
    lid: license.id,
    pid: license.productId,
    pln: plan.id,
    sts: license.status,
    idn: identifier,
    fpr: fingerprint(identifier, license.productId),
    ftr: features,
    iat,
    exp: onlineTokenExpiry(iat, ttlSeconds, license.validUntil, plan.graceDays),
    // Spec: sup is unix seconds, 0 = unlimited support window.
    sup: license.supportUntil ? seconds(license.supportUntil.getTime()) : 0,
    grc: plan.graceDays,
    nce: nonce,
    kid,
  };
}

/**
 * Verify records last_seen_at at most once per interval per activation: verify is the hot path and
 * a write per call would serialize every client start on SQLite's single writer.
 */
export function lastSeenDue(lastSeenAt: Date | null, now: Date, intervalMs: number): boolean {
  return lastSeenAt === null || now.getTime() - lastSeenAt.getTime() >= intervalMs;
}

/** The activation a re-activation leaves: the new label, and `at` as last_seen when due (NewActivation.seenBefore). */
export function reactivated(existing: Activation, input: Pick<NewActivation, "label" | "at" | "seenBefore">): { activation: Activation; changed: boolean } {
  const label = input.label ?? existing.label;
  const due = input.seenBefore === undefined || existing.lastSeenAt === null || existing.lastSeenAt.getTime() <= input.seenBefore.getTime();
  return { activation: { ...existing, label, lastSeenAt: due ? input.at : existing.lastSeenAt }, changed: due || label !== existing.label };
}

/**
 * What activate can decide on a consistent read of the license, the identifier's activation and the
 * slots taken, before any write (both engines; the read is one statement on each):
 * - `answer`: a refusal for lack of slots, or a re-activation with nothing to write (label and
 *   last_seen unchanged, no effects, no Idempotency outcome to store). `check` throws the other
 *   refusals (an unknown or unusable license);
 * - `slot`: the identifier needs a new slot: only the engine's locked write path may take it;
 * - `reactivate`: a re-activation with something to write (`activation` as it will be stored, with
 *   its effects computed once).
 */
export type ReadDecision =
  | { kind: "answer"; outcome: ActivateOutcome }
  | { kind: "slot" }
  | { kind: "reactivate"; outcome: ActivatedOutcome; existing: Activation; effects: Effects | undefined };

export function decideOnRead(
  input: Pick<NewActivation, "label" | "at" | "seenBefore">,
  current: LicenseAccess | null,
  existing: Activation | null,
  count: number,
  check: (current: LicenseAccess | null) => void,
  storesOutcome: boolean,
  effects?: (outcome: ActivatedOutcome) => Effects,
): ReadDecision {
  check(current);
  const access = current!;
  const max = access.plan.maxActivations;
  if (!existing) return max !== null && count >= max ? { kind: "answer", outcome: { kind: "limit", max } } : { kind: "slot" };
  // Re-activation takes no slot (spec: Activation table); it refreshes the label and, when due, last_seen.
  const { activation, changed } = reactivated(existing, input);
  const outcome: ActivatedOutcome = { kind: "already_activated", activation, access };
  const effs = effects?.(outcome);
  if (!changed && !storesOutcome && !(effs && hasEffects(effs))) return { kind: "answer", outcome };
  return { kind: "reactivate", outcome, existing, effects: effs };
}
