import { sql } from "drizzle-orm";
import { table, text, integer, index, uniqueIndex, primaryKey, ts, byteOrder } from "../dialect/sqlite";
import { licenses } from "./licenses";

export const ADMIN_ROLES = ["admin", "support", "viewer"] as const;
export const SEAT_ROLES = ["admin", "member"] as const;

/**
 * People who sign in (portal customers, seat holders, admins). Keyed by the lower-cased email
 * (DECISIONS: Sessions and sign-in). `role` is the admin role; null = not an admin.
 */
export const users = table(
  "users",
  {
    id: text("id").primaryKey(),
    email: text("email").notNull().unique(),
    role: text("role", { enum: ADMIN_ROLES }),
    createdAt: ts("created_at").notNull(),
    lastSignInAt: ts("last_sign_in_at"),
  },
  // GET /admin/users: newest first in (created_at, id), all, by role, or every admin (role not null).
  (t) => [
    index("users_created_idx").on(t.createdAt, byteOrder(t.id)),
    index("users_role_idx").on(t.role, t.createdAt, byteOrder(t.id)),
    index("users_admins_idx").on(t.createdAt, byteOrder(t.id)).where(sql`${t.role} IS NOT NULL`),
  ],
);

/**
 * Signed-in sessions. The cookie carries a random token; only its keyed hash is stored. A session
 * ends at `idle_expires_at` (slid forward while used) or `absolute_expires_at`, whichever is first.
 */
export const sessions = table(
  "sessions",
  {
    id: text("id").primaryKey(),
    tokenHash: text("token_hash").notNull().unique(),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    /** How the session was opened: otp, dev, invite, oauth:<provider>. */
    method: text("method").notNull(),
    ip: text("ip"),
    userAgent: text("user_agent"),
    createdAt: ts("created_at").notNull(),
    lastSeenAt: ts("last_seen_at").notNull(),
    idleExpiresAt: ts("idle_expires_at").notNull(),
    absoluteExpiresAt: ts("absolute_expires_at").notNull(),
  },
  (t) => [
    // GET /admin/sessions: newest first in (created_at, id), all or one user's.
    index("sessions_created_idx").on(t.createdAt, byteOrder(t.id)),
    index("sessions_user_idx").on(t.userId, t.createdAt, byteOrder(t.id)),
    // prune-sessions: the expired rows, by either end, in batches.
    index("sessions_idle_expiry_idx").on(t.idleExpiresAt),
    index("sessions_absolute_expiry_idx").on(t.absoluteExpiresAt),
  ],
);

/**
 * Email one-time sign-in codes, one per sign-in attempt: the attempt is the browser that asked (the
 * keyed hash of its `sign_in_attempt` cookie), the code a keyed hash of (address, code). Several
 * attempts per address may be live; rows stay an hour (spent or not) so the per-address cap on codes
 * an hour can count them (docs/sign-in.md).
 */
export const signInCodes = table(
  "sign_in_codes",
  {
    attemptHash: text("attempt_hash").primaryKey(),
    email: text("email").notNull(),
    codeHash: text("code_hash").notNull(),
    attempts: integer("attempts").notNull().default(0),
    createdAt: ts("created_at").notNull(),
    expiresAt: ts("expires_at").notNull(),
  },
  // The prune-sessions pass deletes the old codes of every address, in batches, by created_at.
  (t) => [index("sign_in_codes_email_created_idx").on(t.email, t.createdAt), index("sign_in_codes_created_idx").on(t.createdAt)],
);

/**
 * Team seats on a license (spec: Seat). The owner (the license email) has no row. `email` is
 * lower-cased. A pending seat holds the keyed hash of its invite token; accept clears it.
 */
export const seats = table(
  "seats",
  {
    id: text("id").primaryKey(),
    licenseId: text("license_id")
      .notNull()
      .references(() => licenses.id, { onDelete: "cascade" }),
    email: text("email").notNull(),
    role: text("role", { enum: SEAT_ROLES }).notNull(),
    userId: text("user_id").references(() => users.id, { onDelete: "set null" }),
    inviteTokenHash: text("invite_token_hash").unique(),
    inviteExpiresAt: ts("invite_expires_at"),
    invitedAt: ts("invited_at").notNull(),
    acceptedAt: ts("accepted_at"),
    removedAt: ts("removed_at"),
    createdAt: ts("created_at").notNull(),
    updatedAt: ts("updated_at").notNull(),
  },
  (t) => [
    uniqueIndex("seats_license_email_uq").on(t.licenseId, t.email),
    index("seats_email_idx").on(t.email),
    // GET /portal/licenses: a signed-in user's accepted seats, in the order they were accepted.
    index("seats_user_idx").on(t.userId, t.acceptedAt, byteOrder(t.id)),
    // A license's seats oldest first (GET /admin/licenses/:id/seats, POST /portal/seats), without a sort.
    index("seats_license_created_idx").on(t.licenseId, t.createdAt, byteOrder(t.id)),
  ],
);
