import type { Recorder } from "../idempotency/repo";
import type { LicenseAccess } from "../license-api/repo";

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

export interface FloatingRepo {
  /**
   * Atomic (spec: License rule 4): inside one write transaction, re-reads the license and asks
   * `decide` for the limits (it throws to refuse), drops the license's expired sessions, refreshes
   * the identifier's live session or opens a new one if a seat is free. `record`, when given, runs
   * inside the same transaction after the write (the Idempotency-Key outcome is stored there, so a
   * crash cannot separate the two); throwing from it undoes the write.
   */
  checkout(
    input: { licenseId: string; identifier: string; label: string | null; at: Date },
    decide: (current: LicenseAccess | null) => FloatingLimits,
    record?: Recorder<CheckoutOk>,
  ): Promise<CheckoutOutcome>;
  /** Extends a live session to `expiresAt`; null when there is none (expired sessions stay dead). */
  heartbeat(licenseId: string, identifier: string, at: Date, expiresAt: Date): Promise<{ session: FloatingSession; active: number } | null>;
  /** Releases a live session; null when there is none. */
  checkin(licenseId: string, identifier: string, at: Date): Promise<{ session: FloatingSession; active: number } | null>;
  listActive(licenseId: string, at: Date): Promise<FloatingSession[]>;
  /**
   * Deletes sessions that expired before `before` (dead rows: they never count and are never
   * revived); returns them, for the floating.expired events. A job pass; checkout also drops a
   * license's own expired sessions.
   */
  expire(before: Date): Promise<FloatingSession[]>;
}
