import { t } from "../../http/schema";
import { DateTime, identifierField, LabelField, LicenseKeyField, LicenseStatusSchema, NullableDateTime, ProductIdField, Uuid } from "../license-api/model";

export const activationModels = (identifierMaxLength: number) => ({
  ActivateBody: t.Object({
    license_key: LicenseKeyField,
    identifier: identifierField(identifierMaxLength),
    identifier_type: t.Optional(t.Union([t.Literal("device"), t.Literal("user")], { default: "device" })),
    label: LabelField,
    product_id: ProductIdField,
  }),
  VerifyBody: t.Object({
    license_key: LicenseKeyField,
    identifier: identifierField(identifierMaxLength),
    product_id: ProductIdField,
  }),
});

export const ActivateResponse = t.Object({
  status: t.Union([t.Literal("activated"), t.Literal("already_activated")]),
  license_id: Uuid,
  token: t.String({ description: "Signed token: base64url(payload).base64url(Ed25519 signature)" }),
});

export const VerifyResponse = t.Object({
  status: LicenseStatusSchema,
  plan_id: Uuid,
  plan_name: t.String(),
  valid_until: NullableDateTime,
  support_until: NullableDateTime,
  features: t.Record(t.String(), t.Union([t.Boolean(), t.String()]), {
    description: "Plan and add-on features: bool and flag features as booleans, all others as strings",
  }),
  token: t.String(),
  grace_days: t.Integer(),
  external_customer_id: t.Optional(t.String()),
  external_workspace_id: t.Optional(t.String()),
});

export const DeactivateResponse = t.Object({ status: t.Literal("deactivated") });

export const ActivationParams = t.Object({ id: Uuid, activation_id: Uuid });

export const ActivationSchema = t.Object(
  {
    id: Uuid,
    identifier: t.String(),
    identifier_type: t.Union([t.Literal("device"), t.Literal("user")]),
    label: t.Union([t.String(), t.Null()]),
    created_at: DateTime,
    last_seen_at: NullableDateTime,
  },
  { title: "Activation" },
);
