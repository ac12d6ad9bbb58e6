// Wire schemas of the portal seat routes, invite acceptance and the admin seat view (spec: Portal
// seats, Invite acceptance, Seat).
import { t } from "../../http/schema";
import { DateTime, LicenseKeyField, NullableDateTime, Uuid } from "../license-api/model";

export const SeatRoleSchema = t.Union([t.Literal("admin"), t.Literal("member")], {
  description: "admin: may invite and remove seats; member: may only use the license",
});
export const PortalRoleSchema = t.Union([t.Literal("owner"), t.Literal("admin"), t.Literal("member")], {
  description: "The caller's standing: the license email's owner, or an accepted seat's role",
});

export const SeatSchema = t.Object(
  {
    seat_id: Uuid,
    email: t.String({ description: "Lower-cased" }),
    role: SeatRoleSchema,
    state: t.Union([t.Literal("pending"), t.Literal("accepted"), t.Literal("removed")]),
    user_id: t.Union([Uuid, t.Null()], { description: "The user who accepted the invite" }),
    invited_at: DateTime,
    invite_expires_at: t.Union([DateTime, t.Null()], { description: "When the outstanding invite stops working; null when none is outstanding" }),
    accepted_at: NullableDateTime,
    removed_at: NullableDateTime,
  },
  { title: "Seat" },
);

const counts = {
  license_id: Uuid,
  max_seats: t.Union([t.Integer(), t.Null()], { description: "The plan's max_seats; null = unlimited" }),
  used_seats: t.Integer({ description: "Pending and accepted seats (both count against max_seats)" }),
};

const nextCursor = t.Union([t.String(), t.Null()], { description: "Pass as `cursor` for the next page; null on the last page" });
const cursorField = t.String({ maxLength: 1024, description: "next_cursor of the previous page" });

export const PortalSeatList = t.Object({ ...counts, role: PortalRoleSchema, seats: t.Array(SeatSchema, { description: "A page of the seats, in invite order" }), next_cursor: nextCursor });
export const AdminSeatList = t.Object({
  ...counts,
  items: t.Array(SeatSchema, { description: "A page of the seats, removed ones included, in invite order" }),
  next_cursor: nextCursor,
});
export const AdminSeatQuery = t.Object(
  { cursor: t.Optional(cursorField), limit: t.Optional(t.QueryInteger({ minimum: 1, maximum: 100, default: 50 })) },
  { additionalProperties: false },
);

export const SeatsBody = t.Object({
  license_key: LicenseKeyField,
  cursor: t.Optional(cursorField),
  limit: t.Optional(t.Integer({ minimum: 1, maximum: 100, default: 50 })),
});
export const AddSeatBody = t.Object({
  license_key: LicenseKeyField,
  email: t.String({ format: "email", maxLength: 320, description: "Matched case-insensitively; the license owner's own address is refused (400)" }),
  role: t.Optional(SeatRoleSchema),
});
export const RemoveSeatBody = t.Object({ license_key: LicenseKeyField, seat_id: t.String({ description: "A seat of this license" }) });

export const AddSeatResponse = t.Object({
  ...SeatSchema.properties,
  result: t.Union([t.Literal("invited"), t.Literal("reinvited"), t.Literal("restored"), t.Literal("existing")], {
    description:
      "invited: new pending seat, invite sent; reinvited: pending seat, token rotated and invite re-sent; restored: a removed seat is pending again with a new invite; existing: the seat was already accepted, nothing sent",
  }),
});

/**
 * No shape constraint on purpose: a malformed token gets the same 404 SEAT_INVITE_INVALID as an
 * unknown one (spec: every failure is that one answer).
 */
export const AcceptInviteBody = t.Object({ token: t.String({ description: "The invite token from the invite link (64 hex characters)" }) });

export const AcceptInviteResponse = t.Object({
  user_id: Uuid,
  email: t.String(),
  license_id: Uuid,
  product_name: t.String(),
  role: SeatRoleSchema,
});

export const AdminSeatParams = t.Object({ id: Uuid, seat_id: Uuid });
