import { table, text, integer, index, primaryKey, ts } from "../dialect/sqlite";

/**
 * Idempotency-Key claims and stored outcomes (DECISIONS: Idempotency). The primary key is the scope
 * (key, route, license key hash), so claiming is one atomic INSERT: of N parallel requests exactly
 * one inserts and runs. The stored response is AES-GCM sealed because it can hold a signed token.
 */
export const idempotencyKeys = table(
  "idempotency_keys",
  {
    key: text("key").notNull(),
    route: text("route").notNull(),
    /** HMAC lookup hash of the license key in the body (never the key itself). */
    scope: text("scope").notNull(),
    bodyHash: text("body_hash").notNull(),
    state: text("state", { enum: ["in_flight", "done"] }).notNull(),
    responseStatus: integer("response_status"),
    responseSealed: text("response_sealed"),
    createdAt: ts("created_at").notNull(),
    completedAt: ts("completed_at"),
  },
  (t) => [primaryKey({ columns: [t.key, t.route, t.scope] }), index("idempotency_keys_created_idx").on(t.createdAt)],
);
