import { t } from "../../http/schema";
import { DateTime, identifierField, LabelField, LicenseKeyField, ProductIdField, Uuid } from "../license-api/model";

export const floatingModels = (identifierMaxLength: number) => ({
  CheckoutBody: t.Object({
    license_key: LicenseKeyField,
    identifier: identifierField(identifierMaxLength),
    label: LabelField,
    product_id: ProductIdField,
  }),
  SessionBody: t.Object({
    license_key: LicenseKeyField,
    identifier: identifierField(identifierMaxLength),
    product_id: ProductIdField,
  }),
});

const counts = {
  active_sessions: t.Integer(),
  max_sessions: t.Union([t.Integer(), t.Null()], { description: "The plan's max_activations; null = unlimited" }),
};

export const SessionResponse = t.Object({ session_id: Uuid, expires_at: DateTime, ...counts });
export const CheckinResponse = t.Object({ session_id: Uuid, released: t.Literal(true), ...counts });

export const FloatingSessionSchema = t.Object(
  {
    session_id: Uuid,
    identifier: t.String(),
    label: t.Union([t.String(), t.Null()]),
    created_at: DateTime,
    heartbeat_at: DateTime,
    expires_at: DateTime,
  },
  { title: "FloatingSession" },
);
