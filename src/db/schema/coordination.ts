import { table, text, primaryKey, ts, json, bigint } from "../dialect/sqlite";

/**
 * One row per scheduled job pass, shared by every node on the database. A node claims a pass with one
 * conditional UPDATE (the lease is free or expired, and last_slot_at is before the slot being
 * claimed) that also increments `fence`, so at most one node runs a given slot and a node that lost
 * its lease can tell (its fence is no longer the current one).
 */
export const jobLeases = table("job_leases", {
  name: text("name").primaryKey(),
  /** Node holding the lease; null when free. */
  owner: text("owner"),
  leaseUntil: ts("lease_until"),
  fence: bigint("fence").notNull().default(0),
  /** The scheduled slot last claimed. */
  lastSlotAt: ts("last_slot_at"),
  lastStartedAt: ts("last_started_at"),
  lastFinishedAt: ts("last_finished_at"),
  lastResult: json("last_result").$type<Record<string, unknown>>(),
});

/**
 * Named generation counters: bumped in the same transaction as a change other nodes must notice
 * (`token_keys` when the active token-signing key rotates, `catalog` when plans or features change),
 * and read by every node to invalidate its caches.
 */
export const generations = table("generations", {
  name: text("name").primaryKey(),
  value: bigint("value").notNull().default(0),
});

/**
 * The lifecycle pass's watermark (modules/lifecycle/service.ts): the `now` of the last pass that
 * completed, and the settings it ran with. A later pass with the same settings reads only the dates
 * that crossed a threshold since then, plus the licenses changed since then.
 */
export const lifecycleWatermark = table("lifecycle_watermark", {
  name: text("name").primaryKey(),
  passedAt: ts("passed_at").notNull(),
  /** The reminder settings of that pass (JSON); another value means a full pass. */
  basis: text("basis").notNull(),
});
