import { sql } from "drizzle-orm";
import { sqliteTable, text, integer, uniqueIndex, index, primaryKey } from "drizzle-orm/sqlite-core";
import { products, plans, addons } from "./catalog";

const ts = (name: string) => integer(name, { mode: "timestamp_ms" });

export const LICENSE_STATUSES = [
  "active",
  "trialing",
  "past_due",
  "canceled",
  "expired",
  "suspended",
  "revoked",
] as const;

export const licenses = sqliteTable(
  "licenses",
  {
    id: text("id").primaryKey(),
    productId: text("product_id")
      .notNull()
      .references(() => products.id, { onDelete: "restrict" }),
    planId: text("plan_id")
      .notNull()
      .references(() => plans.id, { onDelete: "restrict" }),
    // No plaintext key column: an HMAC lookup hash and an AES-GCM copy (DECISIONS: Keys and secrets).
    keyHash: text("key_hash").notNull().unique(),
    keyEncrypted: text("key_encrypted").notNull(),
    keyHint: text("key_hint").notNull(),
    email: text("email").notNull(),
    status: text("status", { enum: LICENSE_STATUSES }).notNull(),
    /** State to return to on reinstate after suspend. */
    priorStatus: text("prior_status", { enum: LICENSE_STATUSES }),
    validUntil: ts("valid_until"),
    supportUntil: ts("support_until"),
    externalCustomerId: text("external_customer_id"),
    externalWorkspaceId: text("external_workspace_id"),
    createdAt: ts("created_at").notNull(),
    updatedAt: ts("updated_at").notNull(),
  },
  (t) => [
    index("licenses_product_idx").on(t.productId, t.id),
    index("licenses_plan_idx").on(t.planId),
    index("licenses_status_idx").on(t.status),
    index("licenses_email_idx").on(t.email),
    // Portal: licenses owned by a signed-in address (matched case-insensitively).
    index("licenses_email_lower_idx").on(sql`lower(${t.email})`),
    index("licenses_ext_customer_idx").on(t.externalCustomerId),
  ],
);

export const licenseAddons = sqliteTable(
  "license_addons",
  {
    licenseId: text("license_id")
      .notNull()
      .references(() => licenses.id, { onDelete: "cascade" }),
    addonId: text("addon_id")
      .notNull()
      .references(() => addons.id, { onDelete: "restrict" }),
    createdAt: ts("created_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.licenseId, t.addonId] })],
);

export const activations = sqliteTable(
  "activations",
  {
    id: text("id").primaryKey(),
    licenseId: text("license_id")
      .notNull()
      .references(() => licenses.id, { onDelete: "cascade" }),
    identifier: text("identifier").notNull(),
    identifierType: text("identifier_type", { enum: ["device", "user"] }).notNull().default("device"),
    label: text("label"),
    createdAt: ts("created_at").notNull(),
    lastSeenAt: ts("last_seen_at"),
  },
  (t) => [uniqueIndex("activations_license_identifier_uq").on(t.licenseId, t.identifier)],
);
