import { sql } from "drizzle-orm";
import { table, text, integer, index, primaryKey, ts, json, bool, byteOrder, lowerAscii, jsonText } from "../dialect/sqlite";
import { products } from "./catalog";

export const apiKeys = table("api_keys", {
  id: text("id").primaryKey(),
  name: text("name").notNull(),
  /** HMAC-SHA256 of the key under a subkey; the key itself is shown once at creation. */
  keyHash: text("key_hash").notNull().unique(),
  /** First characters of the key, to recognise it in lists ("kw_live_ab12…"). */
  keyPrefix: text("key_prefix").notNull(),
  scopes: json("scopes").$type<string[]>().notNull(),
  productId: text("product_id").references(() => products.id, { onDelete: "cascade" }),
  createdAt: ts("created_at").notNull(),
  lastUsedAt: ts("last_used_at"),
  revokedAt: ts("revoked_at"),
});

export const settings = table("settings", {
  key: text("key").primaryKey(),
  value: json("value").notNull(),
  updatedAt: ts("updated_at").notNull(),
});

export const auditLog = table(
  "audit_log",
  {
    id: text("id").primaryKey(),
    actorType: text("actor_type", { enum: ["api_key", "session", "system"] }).notNull(),
    actorId: text("actor_id"),
    action: text("action").notNull(),
    entityType: text("entity_type").notNull(),
    entityId: text("entity_id"),
    productId: text("product_id"),
    changes: json("changes"),
    ip: text("ip"),
    requestId: text("request_id"),
    createdAt: ts("created_at").notNull(),
  },
  // GET /admin/audit lists newest first in (created_at, id) order; each filter it offers has an index
  // that ends in that order, so a page is one index range read of `limit` rows, never a sort
  // (docs/performance.md "Admin lists at scale"; test/contract/admin-query-plans.contract.test.ts).
  (t) => [
    index("audit_created_idx").on(t.createdAt, byteOrder(t.id)),
    index("audit_entity_idx").on(t.entityType, t.entityId, t.createdAt, byteOrder(t.id)),
    index("audit_entity_type_idx").on(t.entityType, t.createdAt, byteOrder(t.id)),
    index("audit_action_idx").on(t.action, t.createdAt, byteOrder(t.id)),
    index("audit_actor_idx").on(t.actorId, t.createdAt, byteOrder(t.id)),
    index("audit_product_idx").on(t.productId, t.createdAt, byteOrder(t.id)),
  ],
);

/** Ed25519 keys: purpose "token" (license tokens, product_id null) or "release" (per product). */
export const signingKeys = table(
  "signing_keys",
  {
    id: text("id").primaryKey(),
    kid: text("kid").notNull().unique(),
    purpose: text("purpose", { enum: ["token", "release"] }).notNull(),
    productId: text("product_id").references(() => products.id, { onDelete: "cascade" }),
    publicKey: text("public_key").notNull(),
    /** AES-256-GCM sealed seed (HKDF subkey, row id as AAD). */
    privateKeyEncrypted: text("private_key_encrypted").notNull(),
    /** minisign key number (8 bytes, hex) for release keys. */
    keyNum: text("key_num"),
    active: bool("active").notNull(),
    createdAt: ts("created_at").notNull(),
    retiredAt: ts("retired_at"),
  },
  (t) => [index("signing_keys_purpose_idx").on(t.purpose, t.productId, t.active)],
);

/**
 * Transactional outbox: webhooks and emails are written here in the same transaction as the change
 * that causes them and delivered by a job afterwards (no network I/O inside transactions).
 */
export const outbox = table(
  "outbox",
  {
    id: text("id").primaryKey(),
    kind: text("kind", { enum: ["event", "email"] }).notNull(),
    topic: text("topic").notNull(),
    payload: json("payload").notNull(),
    status: text("status", { enum: ["pending", "sent", "failed", "logged"] }).notNull().default("pending"),
    attempts: integer("attempts").notNull().default(0),
    nextAttemptAt: ts("next_attempt_at").notNull(),
    lastError: text("last_error"),
    createdAt: ts("created_at").notNull(),
    sentAt: ts("sent_at"),
  },
  (t) => [
    // The delivery worker's claim (due pending messages in (next_attempt_at, id) order, LIMIT) and the
    // prune-history batches (finished ones by age).
    index("outbox_due_idx").on(t.status, t.nextAttemptAt, byteOrder(t.id)),
    // GET /admin/emails and /admin/events: newest first in (created_at, id) per kind, and per filter
    // offered (status, template/type, recipient, product) one index ending in that order. The
    // expressions are the repositories' own (modules/outbox/repo.sqlite.ts), written with `->>`:
    // drizzle-kit splits an index expression at its commas.
    index("outbox_kind_created_idx").on(t.kind, t.createdAt, byteOrder(t.id)),
    index("outbox_kind_status_created_idx").on(t.kind, t.status, t.createdAt, byteOrder(t.id)),
    index("outbox_kind_topic_created_idx").on(t.kind, t.topic, t.createdAt, byteOrder(t.id)),
    index("outbox_email_to_idx").on(t.kind, lowerAscii(jsonText(t.payload, "to")), t.createdAt, byteOrder(t.id)),
    index("outbox_event_product_idx").on(t.kind, sql`(${jsonText(t.payload, "data", "product_id")})`, t.createdAt, byteOrder(t.id)),
  ],
);

/** Admin overrides of the editable email templates (modules/email/editable.ts, template-admin.ts); no row = the default. */
export const emailTemplates = table("email_templates", {
  name: text("name").primaryKey(),
  subject: text("subject").notNull(),
  body: text("body").notNull(),
  updatedAt: ts("updated_at").notNull(),
});
