import { t } from "../../http/schema";
import { FeatureName, QuotaPeriodSchema, ValueTypeSchema, featureValueFields } from "../plans/model";

const Uuid = t.String({ format: "uuid" });
const Name = t.String({ minLength: 1, maxLength: 200, description: "Unique per product" });

export const CreateAddonBody = t.Object(
  { product_id: Uuid, name: Name, feature_name: FeatureName, ...featureValueFields },
  { additionalProperties: false },
);

export const UpdateAddonBody = t.Object(
  {
    name: t.Optional(Name),
    feature_name: t.Optional(FeatureName),
    value_type: t.Optional(ValueTypeSchema),
    value: featureValueFields.value,
    quota_limit: featureValueFields.quota_limit,
    quota_period: featureValueFields.quota_period,
  },
  {
    additionalProperties: false,
    minProperties: 1,
    description: "product_id cannot change. The merged result is validated like a new add-on.",
  },
);

export const AddonSchema = t.Object(
  {
    id: Uuid,
    product_id: Uuid,
    name: t.String(),
    feature_name: t.String(),
    value_type: ValueTypeSchema,
    value: t.String(),
    quota_limit: t.Union([t.Integer(), t.Null()]),
    quota_period: t.Union([QuotaPeriodSchema, t.Null()]),
    created_at: t.String({ format: "date-time" }),
    updated_at: t.String({ format: "date-time" }),
  },
  { title: "Addon" },
);

export const ListAddonsQuery = t.Object(
  { product_id: t.Optional(t.String({ format: "uuid", description: "Product id (UUID)" })) },
  { additionalProperties: false },
);
export const AddonIdParams = t.Object({ id: Uuid });
