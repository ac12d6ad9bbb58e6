// Offline tokens (spec: Offline token issue). An admin-issued token writes no activation (rule 5):
// the only rows it leaves are its audit row and its `offline_token.issued` event. A portal
// self-service offline activation is a row in `offline_activations`: one live row per license, which
// only an admin clears (the row stays, with cleared_at, as history).
import type { LicenseAccess } from "../license-api/repo";
import type { Plan } from "../plans/repo";

/**
 * A license and its plan with the columns the public API reads, plus the plan's
 * `portal_offline_activation` setting (domain.ts offlineAccessOf; the verbs read the rows through
 * LicenseRepo and PlanRepo, service.ts readOfflineAccess).
 */
export interface OfflineAccess extends LicenseAccess {
  plan: LicenseAccess["plan"] & Pick<Plan, "portalOfflineActivation">;
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

/**
 * Rows only: the verbs' units of work (service.ts) lock the license row (LicenseRepo.lock), read it
 * with its plan, decide (domain.ts) and call the writes below, with their effects, in the unit.
 */
export interface OfflineTokenRepo {
  /** The license's live (not cleared) self-service offline activation, or null. */
  findLive(licenseId: string): Promise<OfflineActivation | null>;
  /** Every offline activation of the license, cleared ones included, newest first. */
  listByLicense(licenseId: string): Promise<OfflineActivation[]>;
  /**
   * Inserts a self-service activation, in the caller's unit of work after it locked the license and
   * found none live (service.ts activateOffline); the partial unique index (license_id WHERE
   * cleared_at IS NULL) is the backstop.
   */
  insert(row: OfflineActivation): Promise<void>;
  /**
   * Clears a live activation (sets cleared_at / cleared_by, conditionally: a second clear finds
   * nothing); null when there is no such live row. The caller's unit writes the effects with it.
   */
  clear(licenseId: string, activationId: string, at: Date, clearedBy: string | null): Promise<OfflineActivation | null>;
  /**
   * Verify's fallback when the identifier has no online activation: the license behind `keyHash`
   * when it has a live offline activation for `identifier`; null otherwise.
   */
  findForVerify(keyHash: string, identifier: string): Promise<LicenseAccess | null>;
}
