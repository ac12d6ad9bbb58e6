import { table, text, integer, index, uniqueIndex, primaryKey, ts, bool, bigint } from "../dialect/sqlite";

export const products = table("products", {
  id: text("id").primaryKey(),
  name: text("name").notNull(),
  slug: text("slug").notNull().unique(),
  distribution: text("distribution", { enum: ["open", "licensed"] }).notNull().default("open"),
  minimumSupportedVersion: text("minimum_supported_version"),
  minimumSupportedMessage: text("minimum_supported_message"),
  /**
   * Bumped in the same transaction as every change to what the product's feeds show (publish, yank,
   * unyank, a product edit): rendered feeds are cached per generation (src/modules/feeds/cache.ts).
   */
  releaseGeneration: bigint("release_generation").notNull().default(0),
  createdAt: ts("created_at").notNull(),
  updatedAt: ts("updated_at").notNull(),
});

export const plans = table(
  "plans",
  {
    id: text("id").primaryKey(),
    productId: text("product_id")
      .notNull()
      .references(() => products.id, { onDelete: "restrict" }),
    name: text("name").notNull(),
    licenseType: text("license_type", { enum: ["perpetual", "subscription", "trial"] }).notNull(),
    trialDays: integer("trial_days").notNull().default(14),
    graceDays: integer("grace_days").notNull().default(0),
    maxActivations: integer("max_activations"),
    maxSeats: integer("max_seats"),
    floating: bool("floating").notNull().default(false),
    floatingTimeout: integer("floating_timeout").notNull().default(30),
    supportDays: integer("support_days").notNull().default(365),
    supportRenewalPriceId: text("support_renewal_price_id"),
    /**
     * Stripe price a customer buys this plan with (POST /license/checkout); null: not for sale. A
     * subscription plan is sold as a Stripe subscription, a perpetual plan as a one-time payment.
     */
    purchasePriceId: text("purchase_price_id"),
    /** Free trial days of a Stripe subscription bought through checkout (subscription plans); 0: none. */
    purchaseTrialDays: integer("purchase_trial_days").notNull().default(0),
    /** Whether license owners may activate one air-gapped machine themselves in the portal (non-floating plans). */
    portalOfflineActivation: bool("portal_offline_activation").notNull().default(true),
    quotaPeriod: text("quota_period", { enum: ["hourly", "daily", "monthly", "yearly"] })
      .notNull()
      .default("monthly"),
    createdAt: ts("created_at").notNull(),
    updatedAt: ts("updated_at").notNull(),
  },
  (t) => [index("plans_product_idx").on(t.productId)],
);

export const planFeatures = table(
  "plan_features",
  {
    id: text("id").primaryKey(),
    planId: text("plan_id")
      .notNull()
      .references(() => plans.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    valueType: text("value_type", { enum: ["bool", "int", "string", "quota", "flag"] }).notNull(),
    value: text("value").notNull(),
    quotaLimit: bigint("quota_limit"),
    quotaPeriod: text("quota_period", { enum: ["hourly", "daily", "monthly", "yearly"] }),
    /** Stripe meter event name: accepted usage of this (quota) feature is reported to Stripe Billing. */
    stripeMeter: text("stripe_meter"),
    createdAt: ts("created_at").notNull(),
  },
  (t) => [uniqueIndex("plan_features_plan_name_uq").on(t.planId, t.name)],
);

/** An add-on is one extra feature a product sells separately and attaches to individual licenses. */
export const addons = table(
  "addons",
  {
    id: text("id").primaryKey(),
    productId: text("product_id")
      .notNull()
      .references(() => products.id, { onDelete: "restrict" }),
    name: text("name").notNull(),
    featureName: text("feature_name").notNull(),
    valueType: text("value_type", { enum: ["bool", "int", "string", "quota", "flag"] }).notNull(),
    value: text("value").notNull(),
    quotaLimit: bigint("quota_limit"),
    quotaPeriod: text("quota_period", { enum: ["hourly", "daily", "monthly", "yearly"] }),
    createdAt: ts("created_at").notNull(),
    updatedAt: ts("updated_at").notNull(),
  },
  (t) => [uniqueIndex("addons_product_name_uq").on(t.productId, t.name)],
);
