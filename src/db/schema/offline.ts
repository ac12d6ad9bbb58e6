import { sql } from "drizzle-orm";
import { table, text, index, uniqueIndex, primaryKey, ts, byteOrder } from "../dialect/sqlite";
import { licenses } from "./licenses";

/**
 * Self-service offline activations (portal): at most one live (not cleared) row per license; only an
 * admin clears it, which keeps the row as history. Admin-issued offline tokens leave no row here.
 * A live row also lets that machine verify online (docs/integration.md).
 */
export const offlineActivations = table(
  "offline_activations",
  {
    id: text("id").primaryKey(),
    licenseId: text("license_id")
      .notNull()
      .references(() => licenses.id, { onDelete: "cascade" }),
    identifier: text("identifier").notNull(),
    fingerprint: text("fingerprint").notNull(),
    /** The token's expiry; null = perpetual. */
    expiresAt: ts("expires_at"),
    createdAt: ts("created_at").notNull(),
    /** The portal user who made it. */
    createdBy: text("created_by"),
    clearedAt: ts("cleared_at"),
    /** The admin actor (API key or user id) who cleared it. */
    clearedBy: text("cleared_by"),
  },
  (t) => [
    uniqueIndex("offline_activations_live_uq").on(t.licenseId).where(sql`cleared_at IS NULL`),
    index("offline_activations_license_identifier_idx").on(t.licenseId, t.identifier),
    // GET /admin/licenses/:id/offline-activations: newest first, without a sort.
    index("offline_activations_license_created_idx").on(t.licenseId, t.createdAt, byteOrder(t.id)),
  ],
);
