import { t } from "../../http/schema";
import { DateTime, LicenseKeyField, ProductIdField, QuotaPeriodSchema, Uuid } from "../license-api/model";

const Feature = t.String({ minLength: 1, maxLength: 255, description: "Name of a quota feature of the license" });
const NullableInt = (description: string) => t.Union([t.Integer(), t.Null()], { description });

export const UsageBody = t.Object({
  license_key: LicenseKeyField,
  feature: Feature,
  quantity: t.Optional(t.Integer({ minimum: 1, maximum: 1_000_000_000, default: 1 })),
  // t.Unknown, not t.Record: Elysia's body normalization turns an array or a string into an object
  // ("x" → {"0":"x"}) before a Record schema sees it, so the shape is checked in recordUsage.
  metadata: t.Optional(t.Unknown({ description: "A JSON object stored with the usage event (at most 4 KB of JSON)" })),
  product_id: ProductIdField,
});

export const UsageStatusBody = t.Object({ license_key: LicenseKeyField, feature: Feature, product_id: ProductIdField });

const counterFields = {
  used: t.Integer(),
  limit: NullableInt("Cap per period; null for an unlimited (counted only) quota"),
  remaining: NullableInt("null for an unlimited quota"),
  period: QuotaPeriodSchema,
  period_key: t.String({ description: "UTC window: 2026-11-21T08 (hourly), 2026-11-21 (daily), 2026-11 (monthly), 2026 (yearly)" }),
};

export const UsageResponse = t.Object({ accepted: t.Boolean(), ...counterFields });
export const UsageStatusResponse = t.Object({ feature: t.String(), ...counterFields });

export const UsageCounterSchema = t.Object({ feature: t.String(), ...counterFields, resets_at: DateTime }, { title: "UsageCounter" });
export const LicenseIdParams = t.Object({ id: Uuid });
export const ResetBody = t.Object({ feature: t.Optional(Feature) }, { additionalProperties: false });
