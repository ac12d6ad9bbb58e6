import type { Cursor } from "../../db/cursor";
import type { Recorder } from "../idempotency/repo";
import type { Effects } from "../outbox/effects";
import type { FeatureGrant } from "../entitlements/repo";
import type { LicenseAccess } from "../license-api/repo";

export type IdentifierType = "device" | "user";

export interface Activation {
  id: string;
  licenseId: string;
  identifier: string;
  identifierType: IdentifierType;
  label: string | null;
  createdAt: Date;
  lastSeenAt: Date | null;
}

export interface NewActivation {
  licenseId: string;
  identifier: string;
  identifierType: IdentifierType;
  label: string | null;
  at: Date;
  /**
   * The caller's lookup of this license and identifier (ActivationRepo.lookup), when it has one: an
   * implementation may decide on it instead of reading again (PostgreSQL does, conditional on the
   * license row being unchanged when it writes). Same outcome either way.
   */
  seen?: ActivationLookup;
  /**
   * A re-activation refreshes last_seen_at only when it is unset or not after this instant (the
   * last-seen interval, as verify does); one that changes neither the label nor a due last_seen
   * writes nothing. Undefined: always refresh.
   */
  seenBefore?: Date;
}


/** What activate needs to know before its write: the license, its feature grants, the identifier's activation, the slots taken. */
export interface ActivationLookup {
  access: LicenseAccess;
  /** Plan features, then add-on features in attach order (as EntitlementRepo.grants); shared, read-only. */
  grants: readonly FeatureGrant[];
  /** The identifier's activation on this license, if any. */
  existing: Activation | null;
  /** Activations of the license. */
  count: number;
  /** The license row version the lookup read (PostgreSQL: xmin); absent where the engine has none. */
  version?: string;
  /** SQLite: everything above except add-on grants was read in one statement, at one instant. */
  snapshot?: true;
}

export type ActivatedOutcome = { kind: "activated" | "already_activated"; activation: Activation; access: LicenseAccess };
export type ActivateOutcome = ActivatedOutcome | { kind: "limit"; max: number };

/** What verify reads: license, plan, the caller's activation, and the feature grants for the token. */
export interface VerifyLookup extends LicenseAccess {
  activation: Pick<Activation, "id" | "lastSeenAt">;
  /** Plan features, then add-on features in attach order (as EntitlementRepo.grants); shared, read-only. */
  grants: readonly FeatureGrant[];
}

export interface ActivationRepo {
  /**
   * Atomic (spec: License rule 1): inside one write transaction, re-reads the license and plan and
   * passes them to `check` (throws to refuse, e.g. a license revoked a moment ago), then returns the
   * existing activation of the identifier, or inserts one if the plan's max_activations allows.
   * `record`, when given, runs inside the same transaction after the write (the Idempotency-Key
   * outcome is stored there, so a crash cannot separate the two); throwing from it undoes the write.
   * `effects`, when given, sees the outcome of an activated / already_activated call and its side
   * effects are written in the same transaction (before `record`).
   */
  activate(
    input: NewActivation,
    check: (current: LicenseAccess | null) => void,
    record?: Recorder<ActivatedOutcome>,
    effects?: (outcome: ActivatedOutcome) => Effects,
  ): Promise<ActivateOutcome>;
  /**
   * Activate's read: the license behind a key hash with its plan and grants, the identifier's
   * activation and the license's activation count; null when the key is unknown. Reads committed
   * data without locking; activate() decides atomically whatever it is given.
   */
  lookup(keyHash: string, identifier: string): Promise<ActivationLookup | null>;
  /** Hot path: one prepared statement; null when the key is unknown or the identifier is not activated. */
  findForVerify(keyHash: string, identifier: string): Promise<VerifyLookup | null>;
  /** Sets last_seen_at unless it was set after `notSeenSince` (another node may have just done it). */
  touch(activationId: string, at: Date, notSeenSince: Date): Promise<void>;
  /** Frees the slot, with the side effects of `effects` in the same transaction; false when the identifier was not activated. */
  deactivate(licenseId: string, identifier: string, effects?: (removed: Activation) => Effects): Promise<boolean>;
  /**
   * A license's activations, oldest first: all of them, or (`page`) at most `limit` after `cursor`.
   * Routes always page (a plan without max_activations has no bound); tests read them all.
   */
  listByLicense(licenseId: string, page?: ActivationPage): Promise<Activation[]>;
  /** Admin removal with its audit row in the same transaction; null when not found on this license. */
  remove(licenseId: string, activationId: string, effects: (removed: Activation) => Effects): Promise<Activation | null>;
}

/** One page of a license's activations in (created_at, id) order. */
export interface ActivationPage {
  limit: number;
  /** The last row of the previous page; absent for the first. */
  cursor?: Cursor | null;
}
