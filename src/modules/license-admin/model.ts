import { t } from "../../http/schema";
import { Instant, LicenseStatusSchema } from "../../http/common-schemas";
import { AddonSchema } from "../addons/model";
import { QuotaPeriodSchema, ValueTypeSchema } from "../plans/model";
import { FloatingSessionSchema } from "../floating/model";

const Uuid = t.String({ format: "uuid" });
const Nullable = <T extends Parameters<typeof t.Union>[0][number]>(s: T) => t.Union([s, t.Null()]);

export { LicenseStatusSchema };

const ExternalId = t.String({ minLength: 1, maxLength: 255 });

export const CreateLicenseBody = t.Object(
  {
    product_id: Uuid,
    plan_id: Uuid,
    email: t.String({ format: "email", maxLength: 320, description: "Owner address; the owner has no seat row" }),
    valid_until: t.Optional(Nullable(Instant)),
    support_until: t.Optional(Nullable(Instant)),
    external_customer_id: t.Optional(Nullable(ExternalId)),
    external_workspace_id: t.Optional(Nullable(ExternalId)),
    addon_ids: t.Optional(t.Array(Uuid, { maxItems: 50, uniqueItems: true, description: "Add-ons of the same product to attach" })),
  },
  {
    additionalProperties: false,
    description: "Trial plans start trialing with valid_until = now + trial_days unless valid_until is given",
  },
);

const InstantWith = (description: string) => t.String({ ...Instant, description: `${description} (${Instant.description})` });

// Every filter and search branch is one index range (docs/admin-api.md "Listing licenses"): a page
// costs the same at any table size, and no total is counted.
export const ListLicensesQuery = t.Object(
  {
    product_id: t.Optional(t.String({ format: "uuid", description: "Licenses of this product (filters combine with AND)" })),
    plan_id: t.Optional(t.String({ format: "uuid", description: "Licenses on this plan" })),
    status: t.Optional(LicenseStatusSchema),
    search: t.Optional(
      t.String({
        minLength: 1,
        maxLength: 320,
        description:
          "One lookup, chosen by the term's shape (surrounding spaces ignored): a full license key (any case) → that license; " +
          "a UUID → the license with that id; `@domain` → email_domain; a term with `@` → exact email (case-insensitive); " +
          "otherwise, the first of these with a match: key hint (4 key symbols, any case), exact external customer id, " +
          "exact external workspace id, email prefix (case-insensitive; then ordered as email_prefix is). " +
          "Not a substring search. Not combinable with email_prefix or expiring_before.",
      }),
    ),
    external_customer_id: t.Optional(t.String({ minLength: 1, maxLength: 255, description: "Exact external customer id (case-sensitive)" })),
    external_workspace_id: t.Optional(t.String({ minLength: 1, maxLength: 255, description: "Exact external workspace id (case-sensitive)" })),
    email: t.Optional(t.String({ minLength: 1, maxLength: 320, description: "Exact owner email, case-insensitive" })),
    email_prefix: t.Optional(
      t.String({
        minLength: 1,
        maxLength: 320,
        description: "Owner email starts with this, case-insensitive (A-Z fold). Orders the page by email, then created_at, id (ascending)",
      }),
    ),
    email_domain: t.Optional(
      t.String({ minLength: 1, maxLength: 320, description: "Exact domain: the owner email's text after its first @, case-insensitive; a leading @ is ignored" }),
    ),
    created_after: t.Optional(InstantWith("created_at at or after this instant")),
    created_before: t.Optional(InstantWith("created_at before this instant")),
    expiring_before: t.Optional(
      InstantWith(
        "Licenses with a valid_until at or before this instant (none without one), ordered soonest first by valid_until, then id. Not combinable with email_prefix or search",
      ),
    ),
    cursor: t.Optional(
      t.String({ maxLength: 1024, description: "next_cursor of the previous page, with the same filters; a cursor of another order or filter is refused (400)" }),
    ),
    limit: t.Optional(t.QueryInteger({ minimum: 1, maximum: 200, default: 50 })),
  },
  {
    additionalProperties: false,
    description: "Newest first (created_at, then id, descending) unless email_prefix or expiring_before choose their order. Filters combine with AND.",
  },
);

export const LicenseIdParams = t.Object({ id: Uuid });
export const LicenseAddonParams = t.Object({ id: Uuid, addon_id: Uuid });
export const ChangePlanBody = t.Object({ plan_id: Uuid }, { additionalProperties: false });
export const ValidUntilBody = t.Object(
  { valid_until: Nullable(Instant) },
  { additionalProperties: false, description: "null clears the expiry (not allowed for trials)" },
);
export const SupportUntilBody = t.Object(
  { support_until: Nullable(Instant) },
  { additionalProperties: false, description: "null clears the support window (unlimited)" },
);
export const AttachAddonBody = t.Object({ addon_id: Uuid }, { additionalProperties: false });

const licenseFields = {
  id: Uuid,
  product_id: Uuid,
  plan_id: Uuid,
  plan_name: t.String(),
  email: t.String(),
  status: LicenseStatusSchema,
  key_hint: t.String({ description: "Last characters of the key, to tell keys apart" }),
  valid_until: Nullable(t.String({ format: "date-time" })),
  support_until: Nullable(t.String({ format: "date-time" })),
  external_customer_id: Nullable(t.String()),
  external_workspace_id: Nullable(t.String()),
  created_at: t.String({ format: "date-time" }),
  updated_at: t.String({ format: "date-time" }),
};

export const LicenseSummarySchema = t.Object(licenseFields, { title: "LicenseSummary" });

export const EffectiveFeatureSchema = t.Object(
  {
    name: t.String(),
    value_type: ValueTypeSchema,
    value: t.String(),
    quota_limit: Nullable(t.Integer()),
    quota_period: Nullable(QuotaPeriodSchema),
    sources: t.Array(t.String(), { description: '"plan" and/or the ids of the add-ons that shaped the value' }),
  },
  { title: "EffectiveFeature" },
);

export const ActivationSchema = t.Object(
  {
    id: Uuid,
    identifier: t.String(),
    identifier_type: t.Union([t.Literal("device"), t.Literal("user")]),
    label: Nullable(t.String()),
    created_at: t.String({ format: "date-time" }),
    last_seen_at: Nullable(t.String({ format: "date-time" })),
  },
  { title: "Activation" },
);

export const LicenseDetailSchema = t.Object(
  {
    ...licenseFields,
    license_key: t.String({ description: "The full key (admin view)" }),
    grace_days: t.Integer({ description: "From the plan: days the license stays usable after valid_until" }),
    addons: t.Array(AddonSchema),
    features: t.Array(EffectiveFeatureSchema, { description: "Plan features with add-ons merged (see docs/admin-api.md)" }),
    activations: t.Array(ActivationSchema, { description: "The license's first 100 activations, oldest first" }),
    activations_next_cursor: Nullable(
      t.String({ description: "null when `activations` holds them all; otherwise the `cursor` for GET /admin/licenses/{id}/activations, which pages the rest" }),
    ),
    floating_sessions: t.Array(FloatingSessionSchema, { description: "Live floating sessions (expired ones never count)" }),
  },
  { title: "License" },
);

export const LicensePageSchema = t.Object({
  items: t.Array(LicenseSummarySchema),
  next_cursor: Nullable(t.String()),
});

export const RefundSchema = t.Object(
  {
    payment_id: t.String({ description: "Keyward's id of the refunded payment (the license's last one)" }),
    kind: t.Union([t.Literal("purchase"), t.Literal("support_renewal"), t.Literal("subscription")]),
    stripe_refund_id: Nullable(t.String({ description: "Stripe's refund (re_…); null when Stripe reported the payment as already refunded without naming the refund" })),
    amount: Nullable(t.Integer({ description: "The payment's amount in minor currency units (refunded in full)" })),
    currency: Nullable(t.String()),
    refunded_at: t.String({ format: "date-time" }),
    refunded_now: t.Boolean({ description: "false when an earlier request had already refunded this payment: nothing was sent to Stripe again" }),
    subscription_canceled: Nullable(
      t.Boolean({ description: "The license's Stripe subscription was canceled (true) or could not be canceled now (false: retry the route); null without a subscription" }),
    ),
  },
  { title: "Refund" },
);

export const RefundedLicenseSchema = t.Object({ ...LicenseDetailSchema.properties, refund: RefundSchema }, { title: "RefundedLicense" });

export const ActivationPageQuery = t.Object(
  {
    cursor: t.Optional(t.String({ maxLength: 1024, description: "next_cursor of the previous page (or the license's activations_next_cursor)" })),
    limit: t.Optional(t.QueryInteger({ minimum: 1, maximum: 100, default: 50 })),
  },
  { additionalProperties: false },
);

export const ActivationPageSchema = t.Object({
  items: t.Array(ActivationSchema),
  next_cursor: Nullable(t.String({ description: "Pass as `cursor` for the next page; null on the last page" })),
});
