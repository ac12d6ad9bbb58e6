// The seat events (catalogue: outbox/events.ts). No email address: events never carry one.
import { event, type OutboxEvent } from "../outbox/effects";
import type { SeatEventData } from "../outbox/events";
import type { Seat, SeatState } from "./repo";

const seatData = (s: Seat, productId: string): SeatEventData => ({ seat_id: s.id, license_id: s.licenseId, product_id: productId, role: s.role });

export function seatInvited(s: Seat, productId: string, reason: "invited" | "reinvited" | "restored", at: Date): OutboxEvent {
  return event("seat.invited", at, { ...seatData(s, productId), reason, invite_expires_at: s.inviteExpiresAt!.toISOString() });
}

export function seatAccepted(s: Seat, productId: string, at: Date): OutboxEvent {
  return event("seat.accepted", at, { ...seatData(s, productId), user_id: s.userId! });
}

export function seatRemoved(s: Seat, productId: string, previous: Exclude<SeatState, "removed">, by: "portal" | "admin", at: Date): OutboxEvent {
  return event("seat.removed", at, { ...seatData(s, productId), previous_state: previous, by });
}
