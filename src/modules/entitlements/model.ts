import { t } from "../../http/schema";
import { DateTime, LicenseKeyField, LicenseStatusSchema, ProductIdField, QuotaPeriodSchema, Uuid, ValueTypeSchema } from "../license-api/model";

export const EntitlementsBody = t.Object({
  license_key: LicenseKeyField,
  feature: t.Optional(
    t.String({
      minLength: 1,
      maxLength: 255,
      description: "Single-feature check: the features map then holds only this feature (enabled=false if the license lacks it)",
    }),
  ),
  product_id: ProductIdField,
});

const NullableInt = t.Union([t.Integer(), t.Null()]);

export const FeatureEntitlementSchema = t.Object(
  {
    enabled: t.Boolean(),
    value_type: ValueTypeSchema,
    value: t.String({ description: "Stored value; for quotas the limit (plan plus add-ons) or \"unlimited\"" }),
    used: t.Union([t.Integer(), t.Null()], { description: "Quotas: units used this period; null otherwise" }),
    limit: t.Union([t.Integer(), t.Null()], { description: "Quotas: cap per period, null when unlimited; null otherwise" }),
    remaining: NullableInt,
    period: QuotaPeriodSchema,
    resets_at: DateTime,
  },
  { title: "FeatureEntitlement" },
);

export const EntitlementsResponse = t.Object({
  licensed: t.Boolean({ description: "Always true: an unusable license answers 404 LICENSE_NOT_FOUND instead" }),
  status: LicenseStatusSchema,
  plan_id: Uuid,
  plan_name: t.String(),
  features: t.Record(t.String(), FeatureEntitlementSchema),
});
