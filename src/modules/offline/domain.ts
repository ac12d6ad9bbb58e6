// Offline token rules (spec: Offline token issue; DECISIONS: Signed token). Pure: no I/O; `now`, the
// key id and the nonce are passed in.
import { AppError, validationError } from "../../shared/errors";
import type { TokenClaims } from "../../crypto/token";
import { fingerprint } from "../../crypto/fingerprint";
import { isUsable } from "../licenses/domain";
import type { LicenseAccess } from "../license-api/repo";
import type { License } from "../licenses/repo";
import type { Plan } from "../plans/repo";
import type { OfflineAccess, OfflineActivation } from "./repo";

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

/** NOT_FOUND for a license that is not there (or was deleted a moment ago). */
export const licenseNotFound = () => new AppError("NOT_FOUND", { message: "License not found." });

/** A license row and its plan row as OfflineAccess: the public API's columns and the plan's setting. */
export function offlineAccessOf(license: License, plan: Plan): OfflineAccess {
  return {
    license: {
      id: license.id,
      productId: license.productId,
      planId: license.planId,
      status: license.status,
      validUntil: license.validUntil,
      supportUntil: license.supportUntil,
      externalCustomerId: license.externalCustomerId,
      externalWorkspaceId: license.externalWorkspaceId,
    },
    plan: {
      id: plan.id,
      name: plan.name,
      graceDays: plan.graceDays,
      maxActivations: plan.maxActivations,
      floating: plan.floating,
      floatingTimeout: plan.floatingTimeout,
      quotaPeriod: plan.quotaPeriod,
      portalOfflineActivation: plan.portalOfflineActivation,
    },
  };
}

/** Who asks for a token: an admin picks its expiry (offlineExpiry); the portal's is the license's. */
export type OfflineIssueRule = { kind: "admin"; exp: number } | { kind: "self-service" };

/** What a token issue does: refuse, or sign for `access` with expiry `exp` (unix seconds, 0 = perpetual). */
export type OfflineIssuePlan = { kind: "refuse"; error: AppError } | { kind: "sign"; access: OfflineAccess; exp: number };

/**
 * The issue rule, on the license as read under its row lock: NOT_FOUND when it is gone; an admin's
 * token by offlineIssueRefusal with the admin's expiry; a self-service token (the portal's license
 * file) by selfServiceRefusal, expiring with the license (selfServiceExpiry).
 */
export function planOfflineIssue(current: OfflineAccess | null, rule: OfflineIssueRule, now: Date): OfflineIssuePlan {
  if (!current) return { kind: "refuse", error: licenseNotFound() };
  const refusal = rule.kind === "admin" ? offlineIssueRefusal(current, now) : selfServiceRefusal(current, now);
  if (refusal) return { kind: "refuse", error: refusal };
  return { kind: "sign", access: current, exp: rule.kind === "admin" ? rule.exp : selfServiceExpiry(current) };
}

/** What a self-service activation does: as an issue, or `taken` when the license already has its live one. */
export type SelfServiceActivationPlan = OfflineIssuePlan | { kind: "taken"; existing: OfflineActivation };

/**
 * The self-service activation rule, on the license and its live activation as read under the
 * license row's lock: NOT_FOUND when the license is gone; `taken` while one stands (before the
 * license's own rules: only an admin clears it); else as a self-service issue.
 */
export function planSelfServiceActivation(current: OfflineAccess | null, live: OfflineActivation | null, now: Date): SelfServiceActivationPlan {
  if (current && live) return { kind: "taken", existing: live };
  return planOfflineIssue(current, { kind: "self-service" }, now);
}
