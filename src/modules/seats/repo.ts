// Team seats on a license (spec: Seat, Seat state table; DECISIONS: max_seats null = unlimited,
// pending invites count). The owner (the license email) has no seat row.
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

/** The license as a seat add sees it, read (and on PostgreSQL locked) in the add's unit of work. */
export interface SeatLicense {
  license: License;
  /** The plan's max_seats; null = unlimited. */
  maxSeats: number | null;
}

/** A fresh invite: what a new, re-invited or restored seat gets. */
export interface SeatInvite {
  role: SeatRole;
  /** Keyed hash of the fresh invite token. */
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

/** A keyset page of the portal's lists: `after` is the last row of the previous page. */
export interface SeatsPage {
  after?: { at: Date; id: string };
  limit: number;
}

/**
 * Seat rows, with no rules of their own: the verbs (service.ts) open the unit of work, decide with
 * the pure rules of domain.ts (planSeatAdd) and write through these, effects included
 * (OutboxRepo.writeEffects), in one transaction.
 */
export interface SeatRepo {
  /**
   * In a unit of work (DataStore.transaction): the license with its plan's max_seats, held until the
   * unit ends. PostgreSQL locks the license row (FOR UPDATE), so adds to one license on any node
   * serialise on it; SQLite's unit holds the database's write lock already. null when it does not
   * exist.
   */
  lockLicense(licenseId: string): Promise<SeatLicense | null>;
  /** The license's seat for this (lower-cased) email, in any state; null when there is none. */
  findByEmail(licenseId: string, email: string): Promise<Seat | null>;
  /** A new pending seat. */
  insertInvite(licenseId: string, email: string, invite: SeatInvite): Promise<Seat>;
  /** A fresh invite on an existing seat (re-invite, restore): pending again, unbound, not removed. */
  renewInvite(seatId: string, invite: SeatInvite): Promise<Seat>;
  /**
   * Soft-removes a pending or accepted seat of the license (removed_at set, invite token cleared)
   * and returns it; null when the license has no such seat or it was removed before.
   */
  markRemoved(licenseId: string, seatId: string, at: Date): Promise<Seat | null>;
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
  /** Pending → accepted: binds the user, sets accepted_at. null when the seat is no longer pending (removed or accepted meanwhile). */
  markAccepted(seatId: string, userId: string, at: Date): Promise<Seat | null>;
}
