// Offline tokens (spec: Offline token issue). An admin-issued token writes no activation (rule 5):
// the only rows it leaves are its audit row and its `offline_token.issued` event. A portal
// self-service offline activation is a row in `offline_activations`: one live row per license, which
// only an admin clears (the row stays, with cleared_at, as history).
import type { Effects } from "../outbox/effects";
import type { LicenseAccess } from "../license-api/repo";
import type { Plan } from "../plans/repo";

/**
 * A license and its plan as the public API reads them, plus the plan's `portal_offline_activation`
 * setting (not on the verify hot path, so read here, with them).
 */
export interface OfflineAccess extends LicenseAccess {
  plan: LicenseAccess["plan"] & Pick<Plan, "portalOfflineActivation">;
}

/** What `decide` returns: the caller's result and the side effects to write with it. */
export interface OfflineDecision<T> {
  result: T;
  effects: Effects;
}

export interface OfflineActivation {
  id: string;
  licenseId: string;
  identifier: string;
  /** 16 hex: the token's `fpr`. */
  fingerprint: string;
  /** The token's expiry; null = perpetual. */
  expiresAt: Date | null;
  createdAt: Date;
  /** The portal user who made it, when known. */
  createdBy: string | null;
  clearedAt: Date | null;
  clearedBy: string | null;
}

/** `decide`'s answer for a self-service activation: the row to insert, with the result and effects. */
export interface NewOfflineActivation<T> extends OfflineDecision<T> {
  activation: Omit<OfflineActivation, "clearedAt" | "clearedBy">;
}

export type SelfServiceOutcome<T> = { kind: "created"; activation: OfflineActivation; result: T } | { kind: "taken"; existing: OfflineActivation };

export interface OfflineTokenRepo {
  /**
   * Atomic: inside one write transaction, re-reads the license and its plan with the plan's
   * portal_offline_activation setting (on PostgreSQL locking the license row, so a suspend or revoke
   * racing the issue either waits for it or is seen by it) and passes them to `decide`, which throws
   * to refuse (a license suspended a moment ago) or returns the result and its side effects (audit
   * row, event); those are written in the same transaction.
   */
  issue<T>(licenseId: string, decide: (current: OfflineAccess | null) => OfflineDecision<T>): Promise<T>;
  /**
   * Atomic self-service offline activation: inside one write transaction (the license row locked on
   * PostgreSQL), returns `taken` with the live row when the license already has one (nothing
   * written); otherwise calls `decide` (throws to refuse), inserts the row it returns and writes the
   * effects. The partial unique index (license_id WHERE cleared_at IS NULL) backs the rule.
   */
  activate<T>(licenseId: string, decide: (current: OfflineAccess | null) => NewOfflineActivation<T>): Promise<SelfServiceOutcome<T>>;
  /** The license with its plan and the plan's portal_offline_activation setting; null when unknown. */
  findAccess(licenseId: string): Promise<OfflineAccess | null>;
  /** The license's live (not cleared) self-service offline activation, or null. */
  findLive(licenseId: string): Promise<OfflineActivation | null>;
  /** Every offline activation of the license, cleared ones included, newest first. */
  listByLicense(licenseId: string): Promise<OfflineActivation[]>;
  /**
   * Clears a live activation (sets cleared_at / cleared_by, conditionally: a second clear finds
   * nothing) with `effects` in the same transaction; null when there is no such live row.
   */
  clear(licenseId: string, activationId: string, at: Date, clearedBy: string | null, effects: (cleared: OfflineActivation) => Effects): Promise<OfflineActivation | null>;
  /**
   * Verify's fallback when the identifier has no online activation: the license behind `keyHash`
   * when it has a live offline activation for `identifier`; null otherwise.
   */
  findForVerify(keyHash: string, identifier: string): Promise<LicenseAccess | null>;
}
