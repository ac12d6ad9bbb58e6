import { table, text, index, uniqueIndex, primaryKey, ts } from "../dialect/sqlite";
import { licenses } from "./licenses";

/**
 * Floating (concurrent-use) sessions, keyed by identifier per license. A row whose expires_at has
 * passed is dead: it never counts and is never revived (DECISIONS: Floating); checkout deletes it.
 */
export const floatingSessions = table(
  "floating_sessions",
  {
    id: text("id").primaryKey(),
    licenseId: text("license_id")
      .notNull()
      .references(() => licenses.id, { onDelete: "cascade" }),
    identifier: text("identifier").notNull(),
    label: text("label"),
    createdAt: ts("created_at").notNull(),
    heartbeatAt: ts("heartbeat_at").notNull(),
    expiresAt: ts("expires_at").notNull(),
  },
  (t) => [
    uniqueIndex("floating_sessions_license_identifier_uq").on(t.licenseId, t.identifier),
    index("floating_sessions_license_expiry_idx").on(t.licenseId, t.expiresAt),
    // The expire-floating pass: the expired sessions of every license, in batches.
    index("floating_sessions_expiry_idx").on(t.expiresAt),
  ],
);
