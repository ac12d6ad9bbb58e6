import { t } from "../../http/schema";
import { FEATURE_NAME_PATTERN, MAX_FEATURE_VALUE_LENGTH } from "./domain";

const Uuid = t.String({ format: "uuid" });
const Nullable = <T extends Parameters<typeof t.Union>[0][number]>(s: T) => t.Union([s, t.Null()]);

import { QuotaPeriodSchema, storedUntil, ValueTypeSchema } from "../../http/common-schemas";
export { QuotaPeriodSchema, ValueTypeSchema };
export const LicenseTypeSchema = t.Union([t.Literal("perpetual"), t.Literal("subscription"), t.Literal("trial")]);
export const FeatureName = t.String({
  pattern: FEATURE_NAME_PATTERN,
  description: "Lower-case letters, digits and _ . : - (1-64 characters)",
  examples: ["export.pdf"],
});

/** value / quota fields shared by plan features and add-ons. */
export const featureValueFields = {
  value_type: ValueTypeSchema,
  value: t.Optional(t.String({ maxLength: MAX_FEATURE_VALUE_LENGTH, description: "Always a string on the wire; checked against value_type" })),
  quota_limit: t.Optional(Nullable(t.Integer({ minimum: 0, description: "quota features only: units per period" }))),
  quota_period: t.Optional(Nullable(QuotaPeriodSchema)),
};

export const FeatureInput = t.Object({ name: FeatureName, ...featureValueFields }, { additionalProperties: false });
export const UpsertFeatureBody = t.Object(featureValueFields, { additionalProperties: false });

export const FeatureSchema = t.Object(
  {
    name: t.String(),
    value_type: ValueTypeSchema,
    value: t.String(),
    quota_limit: Nullable(t.Integer()),
    quota_period: Nullable(QuotaPeriodSchema),
    created_at: t.String({ format: "date-time" }),
  },
  { title: "PlanFeature" },
);

// null = unlimited; otherwise at least 1 (DECISIONS: License states — 0 is a validation error).
const Limit = Nullable(t.Integer({ minimum: 1, maximum: 1_000_000, description: "null = unlimited" }));

// Stored and returned, acted on by later versions (team seats, support renewals).
const MAX_SEATS =
  "The most seats a license of this plan can hand out (pending invites and accepted seats count; the owner takes none): a further POST /portal/seats/add is 409 SEAT_LIMIT. null = unlimited";
const SUPPORT_DAYS = storedUntil("support renewals", "days one renewal adds to support_until; default 365");
const SUPPORT_RENEWAL_PRICE_ID = storedUntil("support renewals", "the payment provider's price id for one renewal");

const planFields = {
  name: t.String({ minLength: 1, maxLength: 200 }),
  license_type: LicenseTypeSchema,
  trial_days: t.Integer({ minimum: 1, maximum: 3650, description: "Length of a trial license (trial plans); default 14" }),
  grace_days: t.Integer({ minimum: 0, maximum: 3650, description: "Days a license stays usable after valid_until; default 0" }),
  max_activations: Limit,
  max_seats: t.Union([t.Integer({ minimum: 1, maximum: 1_000_000 }), t.Null()], { description: MAX_SEATS }),
  floating: t.Boolean({ description: "Concurrent-session licensing capped by max_activations; default false" }),
  floating_timeout: t.Integer({ minimum: 1, maximum: 10080, description: "Minutes a floating session lives without heartbeat; default 30" }),
  support_days: t.Integer({ minimum: 1, maximum: 36500, description: SUPPORT_DAYS }),
  support_renewal_price_id: t.Union([t.String({ minLength: 1, maxLength: 255 }), t.Null()], { description: SUPPORT_RENEWAL_PRICE_ID }),
  quota_period: QuotaPeriodSchema,
};

/** Plan settings with defaults: optional on create, and each one editable on update. */
const optionalPlanFields = {
  trial_days: t.Optional(planFields.trial_days),
  grace_days: t.Optional(planFields.grace_days),
  max_activations: t.Optional(planFields.max_activations),
  max_seats: t.Optional(planFields.max_seats),
  floating: t.Optional(planFields.floating),
  floating_timeout: t.Optional(planFields.floating_timeout),
  support_days: t.Optional(planFields.support_days),
  support_renewal_price_id: t.Optional(planFields.support_renewal_price_id),
  quota_period: t.Optional(planFields.quota_period),
};

export const CreatePlanBody = t.Object(
  {
    product_id: Uuid,
    name: planFields.name,
    license_type: planFields.license_type,
    ...optionalPlanFields,
    features: t.Optional(t.Array(FeatureInput, { maxItems: 200 })),
  },
  { additionalProperties: false },
);

export const UpdatePlanBody = t.Object(
  {
    name: t.Optional(planFields.name),
    license_type: t.Optional(planFields.license_type),
    ...optionalPlanFields,
  },
  { additionalProperties: false, minProperties: 1, description: "product_id cannot change; features have their own routes" },
);

export const PlanSchema = t.Object(
  {
    id: Uuid,
    product_id: Uuid,
    name: t.String(),
    license_type: LicenseTypeSchema,
    trial_days: t.Integer(),
    grace_days: t.Integer(),
    max_activations: Nullable(t.Integer()),
    max_seats: t.Union([t.Integer(), t.Null()], { description: MAX_SEATS }),
    floating: t.Boolean(),
    floating_timeout: t.Integer(),
    support_days: t.Integer({ description: SUPPORT_DAYS }),
    support_renewal_price_id: t.Union([t.String(), t.Null()], { description: SUPPORT_RENEWAL_PRICE_ID }),
    quota_period: QuotaPeriodSchema,
    features: t.Array(FeatureSchema),
    created_at: t.String({ format: "date-time" }),
    updated_at: t.String({ format: "date-time" }),
  },
  { title: "Plan" },
);

export const ListPlansQuery = t.Object(
  { product_id: t.Optional(t.String({ format: "uuid", description: "Product id (UUID); slugs are not matched" })) },
  { additionalProperties: false },
);
export const PlanIdParams = t.Object({ id: Uuid });
export const FeatureParams = t.Object({ id: Uuid, name: FeatureName });
