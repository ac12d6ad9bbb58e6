// Wire schemas of the portal self-service routes (paths are Keyward's: the spec says they exist and
// leaves them unnamed; documented in docs/portal.md).
import { t } from "../../http/schema";
import { DateTime, LicenseKeyField, NullableDateTime, Uuid } from "../license-api/model";
import { LicenseStatusSchema } from "../../http/common-schemas";
import { PortalRoleSchema } from "../seats/model";

export const MyLicenseSchema = t.Object(
  {
    license_id: Uuid,
    license_key: t.String({ description: "The key, for your apps and the seat routes" }),
    product_id: Uuid,
    product_name: t.String(),
    plan_id: Uuid,
    plan_name: t.String(),
    status: LicenseStatusSchema,
    valid_until: NullableDateTime,
    support_until: t.Union([DateTime, t.Null()], { description: "End of the updates window; null = unlimited" }),
    role: PortalRoleSchema,
    max_seats: t.Union([t.Integer(), t.Null()], { description: "null = unlimited" }),
    used_seats: t.Integer({ description: "Pending and accepted seats" }),
  },
  { title: "PortalLicense" },
);

export const MyLicensesResponse = t.Object({
  items: t.Array(MyLicenseSchema),
  next_cursor: t.Union([t.String(), t.Null()], { description: "Pass as `cursor` for the next page; null on the last page" }),
});

export const MyLicensesQuery = t.Object(
  {
    cursor: t.Optional(t.String({ maxLength: 1024, description: "next_cursor of the previous page" })),
    limit: t.Optional(t.QueryInteger({ minimum: 1, maximum: 100, default: 50 })),
  },
  {
    additionalProperties: false,
    description: "Owned licenses newest first, then seated ones in acceptance order; a page may hold fewer than `limit` items (follow next_cursor until null)",
  },
);

export const PortalActivationSchema = t.Object(
  {
    activation_id: Uuid,
    identifier: t.String(),
    identifier_type: t.Union([t.Literal("device"), t.Literal("user")]),
    label: t.Union([t.String(), t.Null()]),
    created_at: DateTime,
    last_seen_at: NullableDateTime,
  },
  { title: "PortalActivation" },
);

export const ActivationsBody = t.Object({
  license_key: LicenseKeyField,
  cursor: t.Optional(t.String({ maxLength: 1024, description: "next_cursor of the previous page" })),
  limit: t.Optional(t.Integer({ minimum: 1, maximum: 100, default: 50 })),
});
export const ActivationsResponse = t.Object({
  license_id: Uuid,
  items: t.Array(PortalActivationSchema, { description: "Oldest first" }),
  next_cursor: t.Union([t.String(), t.Null()], { description: "Pass as `cursor` for the next page; null on the last page" }),
});
export const DeactivateBody = t.Object({ license_key: LicenseKeyField, activation_id: t.String({ description: "An activation of this license" }) });
