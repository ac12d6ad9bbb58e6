// Team seats on a license (spec: Seat, Seat state table; DECISIONS: max_seats null = unlimited,
// pending invites count). The owner (the license email) has no seat row.
import type { Effects } from "../outbox/effects";
import type { Cursor } from "../../db/cursor";
import type { License } from "../licenses/repo";
import type { SEAT_ROLES } from "../../db/schema/people";

export type SeatRole = (typeof SEAT_ROLES)[number];

/** A seat as the domain sees it. The invite token's hash never leaves the repository. */
export interface Seat {
  id: string;
  licenseId: string;
  /** Lower-cased (normalizeEmail). */
  email: string;
  role: SeatRole;
  /** The user who accepted the invite; null until then. */
  userId: string | null;
  /** When the current invite token stops working; null when no token is outstanding. */
  inviteExpiresAt: Date | null;
  invitedAt: Date;
  acceptedAt: Date | null;
  removedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export type SeatState = "pending" | "accepted" | "removed";

/** The license as the seat limit check sees it, re-read (and on PostgreSQL locked) inside the add. */
export interface SeatLicense {
  license: License;
  /** The plan's max_seats; null = unlimited. */
  maxSeats: number | null;
}

export interface NewSeatInvite {
  licenseId: string;
  email: string;
  role: SeatRole;
  /** Keyed hash of the fresh invite token (used unless the seat is already accepted). */
  tokenHash: string;
  inviteExpiresAt: Date;
  at: Date;
}

/**
 * The rows of the seat state table an add can take:
 * - invited: none → pending (new row)
 * - reinvited: pending → pending (token rotated, role set to the requested one); also an accepted
 *   seat whose user was deleted (unbound: nobody can use it) becomes pending again
 * - restored: removed → pending (new invite; counts against max_seats again)
 * - existing: accepted → accepted (nothing changed)
 */
export type SeatAddKind = "invited" | "reinvited" | "restored" | "existing";
export type SeatAddOutcome = { kind: SeatAddKind; seat: Seat; license: License } | { kind: "limit"; max: number; used: number };

/** A keyset page of the portal's lists: `after` is the last row of the previous page. */
export interface SeatsPage {
  after?: { at: Date; id: string };
  limit: number;
}

export interface SeatRepo {
  /**
   * Atomic (spec: Seat state table, "under max_seats"): inside one write transaction, re-reads the
   * license with its plan's max_seats (PostgreSQL: the license row locked FOR UPDATE, so concurrent
   * adds on any node serialise on it) and passes it to `check` (throws to refuse), then applies the
   * state table to the (license, email) seat. A new or restored seat needs room: pending + accepted
   * seats < max_seats, else `limit` and nothing is written. `effects` sees every non-limit outcome
   * and its side effects are written in the same transaction.
   */
  add(input: NewSeatInvite, check: (current: SeatLicense | null) => void, effects: (outcome: { kind: SeatAddKind; seat: Seat; license: License }) => Effects): Promise<SeatAddOutcome>;
  /**
   * Soft-removes a pending or accepted seat of the license (removed_at set, invite token cleared),
   * with `effects` in the same transaction. A seat removed before is returned as it is, with
   * `changed: false` and no effects. null when the license has no such seat.
   */
  remove(licenseId: string, seatId: string, at: Date, effects: (removed: Seat) => Effects): Promise<{ seat: Seat; changed: boolean } | null>;
  get(licenseId: string, seatId: string): Promise<Seat | null>;
  /**
   * Seats of a license in invite order (created_at, id); removed ones only when asked. All of them,
   * or (`page`) at most `limit` after `cursor`: routes always page (max_seats null puts no bound).
   */
  list(licenseId: string, opts: { includeRemoved: boolean; page?: { limit: number; cursor?: Cursor | null } }): Promise<Seat[]>;
  /** Pending + accepted seats per license (what counts against max_seats); missing ids count 0. */
  countActive(licenseIds: readonly string[]): Promise<Map<string, number>>;
  /** The user's accepted, not removed seat on the license, or null. */
  acceptedSeatOf(licenseId: string, userId: string): Promise<Seat | null>;
  /**
   * Accepted, not removed seats bound to the user, on any license, oldest acceptance first: all of
   * them, or with `page` at most `limit` after the seat at `after` (its accepted_at and id).
   */
  acceptedSeatsOf(userId: string, page?: SeatsPage): Promise<Seat[]>;
  /**
   * Licenses whose owner email equals `email` (ASCII case-insensitively), newest first: all of them,
   * or with `page` at most `limit` after the license at `after` (its created_at and id).
   */
  licensesOwnedBy(email: string, page?: SeatsPage): Promise<License[]>;
  /**
   * Consumes an invite token (spec: "cleared once consumed"): clears the hash of the pending, not
   * removed seat that holds it and returns the seat as it was (its invite expiry included, so the
   * caller can tell an expired token). null when no seat holds it. Atomic: of two concurrent claims
   * of one token, one gets the seat.
   */
  claimInvite(tokenHash: string, at: Date): Promise<Seat | null>;
  /**
   * Pending → accepted: binds the user, sets accepted_at, with `effects` in the same transaction.
   * null when the seat is no longer pending (removed or accepted meanwhile).
   */
  accept(seatId: string, userId: string, at: Date, effects: (accepted: Seat) => Effects): Promise<Seat | null>;
}
