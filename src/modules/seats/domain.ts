// Pure seat rules (spec: Seat, Seat state table, Portal seats). No I/O, no clock.
import { DAY } from "../../shared/clock";
import type { Seat, SeatAddKind, SeatRole, SeatState } from "./repo";

/** Spec: Limits — invite tokens are 64 hex characters (32 random bytes). */
export const INVITE_TOKEN_PATTERN = /^[0-9a-f]{64}$/;
/** Invites stop working 7 days after they were sent (a re-invite sends a fresh one). */
export const INVITE_TTL_MS = 7 * DAY;
/** Spec: Limits — invite accept, 60 requests per minute per IP. */
export const INVITE_ACCEPT_PER_MINUTE = 60;

export function seatState(seat: Pick<Seat, "acceptedAt" | "removedAt">): SeatState {
  if (seat.removedAt !== null) return "removed";
  return seat.acceptedAt !== null ? "accepted" : "pending";
}

/**
 * The caller's standing on a license. The owner is the license email (no seat row); a seat holder
 * stands by an accepted, not removed seat bound to their user. A pending invite gives no standing:
 * until it is accepted, its holder is unrelated to the license.
 */
export type PortalRole = "owner" | SeatRole;

/** Spec: Seat roles — the owner and `admin` seats may invite and remove; `member` may only use the license. */
export function mayManageSeats(role: PortalRole): boolean {
  return role === "owner" || role === "admin";
}

/** Where an invite link points: the portal's accept page, the token in the fragment (never sent to a server log). */
export function acceptUrl(baseUrl: string, token: string): string {
  return `${baseUrl.replace(/\/+$/, "")}/portal/accept-invite#token=${token}`;
}

/**
 * What an add does to the (license, email) seat (spec: Seat state table; DECISIONS: max_seats null =
 * unlimited, pending invites count). `used` is the license's pending + accepted seats, `maxSeats` its
 * plan's, both read in the add's unit of work with the license held.
 * - none → pending (invited), when there is room;
 * - pending → pending (reinvited: token rotated); also an accepted seat whose user was deleted
 *   (unbound: nobody can use it). It takes no new room;
 * - removed → pending (restored), when there is room: it counts again;
 * - accepted → accepted (existing: nothing changes).
 */
export type SeatAddPlan = { kind: "existing" } | { kind: Exclude<SeatAddKind, "existing" | "invited">; seatId: string } | { kind: "invited" } | { kind: "limit"; max: number; used: number };

export function planSeatAdd(existing: Pick<Seat, "id" | "acceptedAt" | "userId" | "removedAt"> | null, maxSeats: number | null, used: number): SeatAddPlan {
  if (existing && existing.removedAt === null) {
    if (existing.acceptedAt !== null && existing.userId !== null) return { kind: "existing" };
    return { kind: "reinvited", seatId: existing.id };
  }
  if (maxSeats !== null && used >= maxSeats) return { kind: "limit", max: maxSeats, used };
  return existing ? { kind: "restored", seatId: existing.id } : { kind: "invited" };
}
