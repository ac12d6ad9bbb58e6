import { sql } from "drizzle-orm";
import { pgTable, text, timestamp, uniqueIndex, index, primaryKey } from "drizzle-orm/pg-core";
import { LICENSE_STATUSES } from "../schema/licenses";
import { products, plans, addons } from "./catalog";

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: "date" });

// One list of statuses for both engines.
export { LICENSE_STATUSES };

export const licenses = pgTable(
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
    index("licenses_email_lower_idx").on(sql`lower(${t.email} COLLATE "C")`),
    index("licenses_ext_customer_idx").on(t.externalCustomerId),
    // The lifecycle pass walks one status at a time over these, in (date, id) keyset order: each page
    // is one index range scan with no sort (modules/lifecycle/repo.pg.ts). The id is in COLLATE "C",
    // the order the walk uses (SQLite's byte order): an index in the default collation cannot give
    // that order, and the plan would sort. They replace licenses_status_idx (a status filter alone
    // uses their leading column) and the date-only indexes.
    index("licenses_status_valid_until_idx").on(t.status, t.validUntil, sql`${t.id} COLLATE "C"`),
    index("licenses_status_support_until_idx").on(t.status, t.supportUntil, sql`${t.id} COLLATE "C"`),
    index("licenses_status_past_due_since_idx").on(t.status, t.pastDueSince, sql`${t.id} COLLATE "C"`),
    // The lifecycle pass's catch-up walk: usable licenses changed since its last completed pass, one
    // status at a time (the licenses a pass itself expires leave the range, so the next pass does not
    // read them again).
    index("licenses_status_updated_idx").on(t.status, t.updatedAt, sql`${t.id} COLLATE "C"`),
  ],
);

export const licenseAddons = pgTable(
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

export const activations = pgTable(
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
export const lifecycleNotices = pgTable(
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
