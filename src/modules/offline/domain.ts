// Offline token rules (spec: Offline token issue; DECISIONS: Signed token). Pure: no I/O; `now`, the
// key id and the nonce are passed in.
import { AppError, validationError } from "../../shared/errors";
import type { TokenClaims } from "../../crypto/token";
import { fingerprint } from "../../crypto/fingerprint";
import { isUsable } from "../licenses/domain";
import type { LicenseAccess } from "../license-api/repo";
import type { Plan } from "../plans/repo";
import type { OfflineAccess } from "./repo";

const seconds = (ms: number) => Math.floor(ms / 1000);

/** Spec: States, usability rule 3 — offline tokens are issued only for these. */
export const OFFLINE_ISSUABLE_STATUSES = ["active", "trialing"] as const;

/**
 * The refusal for a license that may not get an offline token, or null. Besides the status, a
 * license past `valid_until + grace_days` is refused even before the lifecycle pass has marked it
 * expired: verify already treats it as expired, and an offline token must not outlive that.
 */
export function offlineIssueRefusal(access: LicenseAccess, now: Date): AppError | null {
  const { license, plan } = access;
  const statusOk = (OFFLINE_ISSUABLE_STATUSES as readonly string[]).includes(license.status);
  if (statusOk && isUsable(license, plan.graceDays, now)) return null;
  const status = statusOk ? "expired" : license.status;
  return new AppError("INVALID_TRANSITION", {
    message: `Offline tokens are issued only for active or trialing licenses; this license is ${status}.`,
    details: { status: license.status, action: "offline_token" },
  });
}

/**
 * The token's expiry in unix seconds: 0 for perpetual (null), else `expiresAt` (sub-second parts
 * dropped). A moment not after `now` is a 400: a token that is born expired is of no use.
 */
export function offlineExpiry(expiresAt: Date | null, now: Date): number {
  if (expiresAt === null) return 0;
  const exp = seconds(expiresAt.getTime());
  if (exp <= seconds(now.getTime())) throw validationError({ expires_at: "must be in the future" });
  return exp;
}

export interface OfflineTokenInput {
  access: LicenseAccess;
  identifier: string;
  features: Record<string, boolean | string>;
  now: Date;
  /** Unix seconds, 0 = perpetual (offlineExpiry). */
  exp: number;
  kid: string;
  nonce: string;
}

/**
 * The same claims as an online token (so one client-side verifier handles both), with `exp` the
 * admin's choice instead of iat + TOKEN_TTL. `sup` carries the support window as it is now
 * (rule 4: a renewed support window needs a new token).
 */
export function offlineTokenClaims({ access, identifier, features, now, exp, kid, nonce }: OfflineTokenInput): TokenClaims {
  const { license, plan } = access;
  return {
    lid: license.id,
    pid: license.productId,
    pln: plan.id,
    sts: license.status,
    idn: identifier,
    fpr: fingerprint(identifier, license.productId),
    ftr: features,
    iat: seconds(now.getTime()),
    exp,
    sup: license.supportUntil ? seconds(license.supportUntil.getTime()) : 0,
    grc: plan.graceDays,
    nce: nonce,
    kid,
  };
}

/** The plan fields that decide whether the portal offers self-service offline activation. */
export type SelfServicePlan = Pick<Plan, "floating" | "portalOfflineActivation">;

/**
 * Self-service offline activation is offered iff the plan's `portal_offline_activation` setting is on
 * (the default) and the plan uses device activation, i.e. is not floating (a floating plan hands out
 * sessions, never device activations). The portal hides the option otherwise.
 */
export function selfServiceOffered(plan: SelfServicePlan): boolean {
  return plan.portalOfflineActivation && !plan.floating;
}

/**
 * A self-service token lives as long as the license may: `valid_until + grace_days` when the license
 * has an expiry, perpetual (0) otherwise. (An admin picks any expiry; a customer does not.)
 */
export function selfServiceExpiry(access: LicenseAccess): number {
  const { license, plan } = access;
  if (license.validUntil === null) return 0;
  return seconds(license.validUntil.getTime() + plan.graceDays * 86_400_000);
}

/**
 * The refusal for a self-service offline activation, or null: the admin rules, then 403 FORBIDDEN
 * when the plan does not offer it (selfServiceOffered).
 */
export function selfServiceRefusal(access: OfflineAccess, now: Date): AppError | null {
  const refusal = offlineIssueRefusal(access, now);
  if (refusal) return refusal;
  if (access.plan.floating) {
    return new AppError("FORBIDDEN", {
      message: "This license's plan does not use device activation, so it offers no offline activation.",
    });
  }
  if (!selfServiceOffered(access.plan)) {
    return new AppError("FORBIDDEN", { message: "This license's plan does not offer self-service offline activation." });
  }
  return null;
}
