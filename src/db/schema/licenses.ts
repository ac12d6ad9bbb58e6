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
    /** Start of the current past_due episode (dunning days, the 30-day limit); null unless past_due (or suspended from it). */
    pastDueSince: ts("past_due_since"),
    externalCustomerId: text("external_customer_id"),
    externalWorkspaceId: text("external_workspace_id"),
    createdAt: ts("created_at").notNull(),
    updatedAt: ts("updated_at").notNull(),
  },
  (t) => [
    index("licenses_product_idx").on(t.productId, t.id),
    index("licenses_plan_idx").on(t.planId),
    index("licenses_email_idx").on(t.email),
    // Portal: licenses owned by a signed-in address (matched case-insensitively).
    index("licenses_email_lower_idx").on(sql`lower(${t.email})`),
    index("licenses_ext_customer_idx").on(t.externalCustomerId),
    // The lifecycle pass walks one status at a time over these, in (date, id) keyset order: each page
    // is one index range scan with no sort (modules/lifecycle/repo.sqlite.ts). They replace
    // licenses_status_idx (a status filter alone, e.g. the admin list, uses their leading column) and
    // the date-only indexes, which made the planner sort every usable license per page.
    index("licenses_status_valid_until_idx").on(t.status, t.validUntil, t.id),
    index("licenses_status_support_until_idx").on(t.status, t.supportUntil, t.id),
    index("licenses_status_past_due_since_idx").on(t.status, t.pastDueSince, t.id),
    // The lifecycle pass's catch-up walk: usable licenses changed since its last completed pass, one
    // status at a time (the licenses a pass itself expires leave the range, so the next pass does not
    // read them again).
    index("licenses_status_updated_idx").on(t.status, t.updatedAt, t.id),
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

/**
 * Lifecycle notices sent (reminders, dunning, support lapse): one row per (license, kind, end date).
 * The insert is the guard: only the run that inserts the row sends the email, so two runs (or two
 * nodes) never send one twice, and a renewed license (a new end date) is reminded again.
 */
export const lifecycleNotices = sqliteTable(
  "lifecycle_notices",
  {
    licenseId: text("license_id")
      .notNull()
      .references(() => licenses.id, { onDelete: "cascade" }),
    /** e.g. expiry_reminder:7, support_reminder:30, support_ended, dunning:1 */
    kind: text("kind").notNull(),
    /** The end date it is about: valid_until, support_until, or the past_due episode's start. */
    dueFor: ts("due_for").notNull(),
    createdAt: ts("created_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.licenseId, t.kind, t.dueFor] })],
);
