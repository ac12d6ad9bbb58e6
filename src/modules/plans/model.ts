import { t } from "../../http/schema";
import { FEATURE_NAME_PATTERN, MAX_FEATURE_VALUE_LENGTH } from "./domain";
import { QuotaPeriodSchema, ValueTypeSchema } from "../../http/common-schemas";

const Uuid = t.String({ format: "uuid" });
const Nullable = <T extends Parameters<typeof t.Union>[0][number]>(s: T) => t.Union([s, t.Null()]);

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

const STRIPE_METER =
  "Stripe meter event name (quota features only): each accepted usage report is sent to Stripe Billing as a meter event for the license's Stripe customer (POST /admin/system/run-metered-sync). null: not metered";
/** Plan features only (add-ons are not metered). */
const planFeatureFields = {
  ...featureValueFields,
  stripe_meter: t.Optional(Nullable(t.String({ pattern: "^[A-Za-z0-9_.:-]{1,100}$", description: STRIPE_METER }))),
};
export const FeatureInput = t.Object({ name: FeatureName, ...planFeatureFields }, { additionalProperties: false });
export const UpsertFeatureBody = t.Object(planFeatureFields, { additionalProperties: false });

export const FeatureSchema = t.Object(
  {
    name: t.String(),
    value_type: ValueTypeSchema,
    value: t.String(),
    quota_limit: Nullable(t.Integer()),
    quota_period: Nullable(QuotaPeriodSchema),
    stripe_meter: t.Union([t.String(), t.Null()], { description: STRIPE_METER }),
    created_at: t.String({ format: "date-time" }),
  },
  { title: "PlanFeature" },
);

// null = unlimited; otherwise at least 1 (DECISIONS: License states — 0 is a validation error).
const Limit = Nullable(t.Integer({ minimum: 1, maximum: 1_000_000, description: "null = unlimited" }));

// Stored and returned, acted on by later versions (team seats, support renewals).
const MAX_SEATS =
  "The most seats a license of this plan can hand out (pending invites and accepted seats count; the owner takes none): a further POST /portal/seats/add is 409 SEAT_LIMIT. null = unlimited";
const SUPPORT_DAYS = "Days one paid support renewal adds to support_until (from max(now, support_until)); default 365";
const SUPPORT_RENEWAL_PRICE_ID =
  "Stripe price id of one support renewal (POST /license/support/checkout; each paid renewal adds support_days to support_until). null: renewals are not sold (503 RENEWAL_NOT_AVAILABLE)";
const PURCHASE_PRICE_ID =
  "Stripe price id a customer buys a license of this plan with (POST /license/checkout): a subscription plan is sold as a Stripe subscription (recurring price), a perpetual plan as a one-time payment; trial plans are not sold. null: not for sale";
const PURCHASE_TRIAL_DAYS = "Free trial days of a subscription bought through POST /license/checkout (the license is trialing meanwhile); 0 = none; default 0";
const PORTAL_OFFLINE_ACTIVATION =
  "Whether the customer portal offers self-service offline activation on this plan's licenses (one air-gapped machine per license, activated by the owner or a seat admin; POST /portal/offline-activation/activate). Offered only when true and the plan is not floating; otherwise the portal's `offered` is false and activate answers 403 FORBIDDEN. Turning it off clears no standing activation. Default true";

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
  purchase_price_id: t.Union([t.String({ minLength: 1, maxLength: 255 }), t.Null()], { description: PURCHASE_PRICE_ID }),
  purchase_trial_days: t.Integer({ minimum: 0, maximum: 730, description: PURCHASE_TRIAL_DAYS }),
  portal_offline_activation: t.Boolean({ description: PORTAL_OFFLINE_ACTIVATION }),
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
  purchase_price_id: t.Optional(planFields.purchase_price_id),
  purchase_trial_days: t.Optional(planFields.purchase_trial_days),
  portal_offline_activation: t.Optional(planFields.portal_offline_activation),
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
    purchase_price_id: t.Union([t.String(), t.Null()], { description: PURCHASE_PRICE_ID }),
    purchase_trial_days: t.Integer({ description: PURCHASE_TRIAL_DAYS }),
    portal_offline_activation: t.Boolean({ description: PORTAL_OFFLINE_ACTIVATION }),
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
