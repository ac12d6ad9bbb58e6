import type { Recorder } from "../idempotency/repo";
import type { LicenseAccess } from "../license-api/repo";
import type { Effects } from "../outbox/effects";

export interface FloatingSession {
  id: string;
  licenseId: string;
  identifier: string;
  label: string | null;
  createdAt: Date;
  heartbeatAt: Date;
  expiresAt: Date;
}

export interface FloatingLimits {
  /** The plan's max_activations; null = unlimited. */
  max: number | null;
  /** The plan's floating_timeout in ms. */
  timeoutMs: number;
}

export type CheckoutOk = { kind: "ok"; session: FloatingSession; active: number; max: number | null };
export type CheckoutOutcome = CheckoutOk | { kind: "limit"; active: number; max: number };

/** What one checkout changed, for its side effects. */
export interface CheckoutChange {
  outcome: CheckoutOutcome;
  /** True when the outcome is a new session (not a refresh of the identifier's live one). */
  opened: boolean;
  /** The license's expired sessions this checkout deleted. */
  expired: FloatingSession[];
}

/** A session the expire pass deleted, with its license's product. */
export interface ExpiredSession {
  session: FloatingSession;
  productId: string;
}

export interface FloatingRepo {
  /**
   * Atomic (spec: License rule 4): inside one write transaction, re-reads the license and asks
   * `decide` for the limits (it throws to refuse), drops the license's expired sessions, refreshes
   * the identifier's live session or opens a new one if a seat is free. `record`, when given, runs
   * inside the same transaction after the write (the Idempotency-Key outcome is stored there, so a
   * crash cannot separate the two); throwing from it undoes the write. `effects`, when given, sees
   * every outcome (a refused checkout still drops expired sessions) and its side effects are written
   * in the same transaction.
   */
  checkout(
    input: { licenseId: string; identifier: string; label: string | null; at: Date },
    decide: (current: LicenseAccess | null) => FloatingLimits,
    record?: Recorder<CheckoutOk>,
    effects?: (change: CheckoutChange) => Effects,
  ): Promise<CheckoutOutcome>;
  /** Extends a live session to `expiresAt`; null when there is none (expired sessions stay dead). */
  heartbeat(licenseId: string, identifier: string, at: Date, expiresAt: Date): Promise<{ session: FloatingSession; active: number } | null>;
  /** Releases a live session, with the side effects of `effects` in the same transaction; null when there is none. */
  checkin(
    licenseId: string,
    identifier: string,
    at: Date,
    effects?: (released: { session: FloatingSession; active: number }) => Effects,
  ): Promise<{ session: FloatingSession; active: number } | null>;
  listActive(licenseId: string, at: Date): Promise<FloatingSession[]>;
  /**
   * Deletes sessions that expired before `before` (dead rows: they never count and are never
   * revived) and returns them; `effects` (the floating.expired events) is written in the same
   * transaction, when something expired. At most `limit` sessions (one batch of the expire-floating
   * pass, by floating_sessions_expiry_idx); checkout also drops a license's own expired sessions.
   */
  expire(before: Date, limit: number, effects?: (expired: ExpiredSession[]) => Effects): Promise<FloatingSession[]>;
}
