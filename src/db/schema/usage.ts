import { table, text, index, primaryKey, ts, json, bigint } from "../dialect/sqlite";
import { licenses } from "./licenses";

/**
 * One counter per (license, feature, period window). The period key names the UTC window
 * (e.g. "2026-11" for monthly), so a new period starts from a fresh row and old rows stay as history.
 */
export const usageCounters = table(
  "usage_counters",
  {
    licenseId: text("license_id")
      .notNull()
      .references(() => licenses.id, { onDelete: "cascade" }),
    feature: text("feature").notNull(),
    periodKey: text("period_key").notNull(),
    used: bigint("used").notNull(),
    updatedAt: ts("updated_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.licenseId, t.feature, t.periodKey] })],
);

/** Every accepted usage report, with the caller's metadata (spec: /license/usage "stored with the event"). */
export const usageEvents = table(
  "usage_events",
  {
    id: text("id").primaryKey(),
    licenseId: text("license_id")
      .notNull()
      .references(() => licenses.id, { onDelete: "cascade" }),
    feature: text("feature").notNull(),
    periodKey: text("period_key").notNull(),
    quantity: bigint("quantity").notNull(),
    metadata: json("metadata").$type<Record<string, unknown>>(),
    createdAt: ts("created_at").notNull(),
  },
  (t) => [index("usage_events_license_idx").on(t.licenseId, t.createdAt)],
);

/**
 * The first refused report of a counter's period leaves a mark here (a row per license, feature and
 * period), so the quota.exceeded event is written exactly once per period; an admin reset of the
 * counter clears it.
 */
export const quotaExceededMarks = table(
  "quota_exceeded_marks",
  {
    licenseId: text("license_id")
      .notNull()
      .references(() => licenses.id, { onDelete: "cascade" }),
    feature: text("feature").notNull(),
    periodKey: text("period_key").notNull(),
    createdAt: ts("created_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.licenseId, t.feature, t.periodKey] })],
);
