import { table, text, index, uniqueIndex, primaryKey, ts, byteOrder, lowerAscii, domainOf } from "../dialect/sqlite";
import { products, plans, addons } from "./catalog";

export const LICENSE_STATUSES = [
  "active",
  "trialing",
  "past_due",
  "canceled",
  "expired",
  "suspended",
  "revoked",
] as const;

export const licenses = table(
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
    // On PostgreSQL also (hand-written in drizzle-pg/0011_lumpy_blue_blade.sql: drizzle-kit does not model it):
    // CREATE STATISTICS licenses_scope_stats (dependencies) ON product_id, plan_id,
    // external_customer_id, external_workspace_id. A plan or a workspace implies its product; without
    // the dependency the planner multiplies the selectivities, expects a handful of rows, and ANDs
    // the product's whole bitmap with the workspace's and sorts (measured at a million licenses).
    // Admin list (modules/licenses listing.ts): every filter it offers is an equality prefix of an
    // index ending in (created_at, id), so a page is a range read in newest-first order, never a sort.
    // Ids order by bytes (byteOrder: on PostgreSQL id COLLATE "C"), which is what the list's ORDER BY says.
    // The product and plan ones also serve the ON DELETE RESTRICT checks of products and plans.
    index("licenses_created_idx").on(t.createdAt, byteOrder(t.id)),
    index("licenses_product_created_idx").on(t.productId, t.createdAt, byteOrder(t.id)),
    index("licenses_product_status_created_idx").on(t.productId, t.status, t.createdAt, byteOrder(t.id)),
    index("licenses_plan_created_idx").on(t.planId, t.createdAt, byteOrder(t.id)),
    index("licenses_status_created_idx").on(t.status, t.createdAt, byteOrder(t.id)),
    index("licenses_key_hint_idx").on(t.keyHint, t.createdAt, byteOrder(t.id)),
    // Portal (licenses owned by a signed-in address, newest first) and the admin list's exact email
    // (same order) and email prefix (a range of lower(email), then created_at, id).
    index("licenses_email_lower_idx").on(lowerAscii(t.email), t.createdAt, byteOrder(t.id)),
    // email_domain: the lower-cased text after the first "@". drizzle-kit splits this expression at
    // its commas when it writes the CREATE INDEX; drizzle/0011_skinny_ultron.sql was corrected by hand.
    index("licenses_email_domain_idx").on(lowerAscii(domainOf(t.email)), t.createdAt, byteOrder(t.id)),
    index("licenses_ext_customer_idx").on(t.externalCustomerId, t.createdAt, byteOrder(t.id)),
    index("licenses_ext_workspace_idx").on(t.externalWorkspaceId, t.createdAt, byteOrder(t.id)),
    // expiring_before reads soonest first (valid_until, id): alone, by product and/or status (listing.ts).
    index("licenses_valid_until_idx").on(t.validUntil, byteOrder(t.id)),
    index("licenses_product_valid_until_idx").on(t.productId, t.validUntil, byteOrder(t.id)),
    index("licenses_product_status_valid_until_idx").on(t.productId, t.status, t.validUntil, byteOrder(t.id)),
    // The lifecycle pass walks one status at a time over these, in (date, id) keyset order: each page
    // is one index range scan with no sort (modules/lifecycle/repo.sqlite.ts). The valid_until one
    // also serves the admin list's expiring_before with a status.
    index("licenses_status_valid_until_idx").on(t.status, t.validUntil, byteOrder(t.id)),
    index("licenses_status_support_until_idx").on(t.status, t.supportUntil, byteOrder(t.id)),
    index("licenses_status_past_due_since_idx").on(t.status, t.pastDueSince, byteOrder(t.id)),
    // The lifecycle pass's catch-up walk: usable licenses changed since its last completed pass, one
    // status at a time (the licenses a pass itself expires leave the range, so the next pass does not
    // read them again).
    index("licenses_status_updated_idx").on(t.status, t.updatedAt, byteOrder(t.id)),
  ],
);

export const licenseAddons = table(
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

export const activations = table(
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
  (t) => [
    uniqueIndex("activations_license_identifier_uq").on(t.licenseId, t.identifier),
    // A license's activations oldest first (the admin license view, the portal), without a sort.
    index("activations_license_created_idx").on(t.licenseId, t.createdAt, byteOrder(t.id)),
  ],
);

/**
 * Lifecycle notices sent (reminders, dunning, support lapse): one row per (license, kind, end date).
 * The insert is the guard: only the run that inserts the row sends the email, so two runs (or two
 * nodes) never send one twice, and a renewed license (a new end date) is reminded again.
 */
export const lifecycleNotices = table(
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
