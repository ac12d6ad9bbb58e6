import { iso } from "../../shared/clock";
import type { Seat } from "./repo";
import { seatState } from "./domain";
import type { AcceptedInvite, AddSeatResult, SeatList } from "./service";

export const presentSeat = (s: Seat) => ({
  seat_id: s.id,
  email: s.email,
  role: s.role,
  state: seatState(s),
  user_id: s.userId,
  invited_at: s.invitedAt.toISOString(),
  invite_expires_at: iso(s.inviteExpiresAt),
  accepted_at: iso(s.acceptedAt),
  removed_at: iso(s.removedAt),
});

const counts = (l: SeatList) => ({
  license_id: l.license.id,
  max_seats: l.maxSeats,
  used_seats: l.usedSeats,
});

export const presentPortalSeats = (l: SeatList) => ({ ...counts(l), role: l.role!, seats: l.seats.map(presentSeat), next_cursor: l.nextCursor });
export const presentAdminSeats = (l: SeatList) => ({ ...counts(l), items: l.seats.map(presentSeat), next_cursor: l.nextCursor });
export const presentAddedSeat = (r: AddSeatResult) => ({ ...presentSeat(r.seat), result: r.kind });

export const presentAccepted = (a: AcceptedInvite) => ({
  user_id: a.user.id,
  email: a.user.email,
  license_id: a.license.id,
  product_name: a.productName,
  role: a.seat.role,
});
