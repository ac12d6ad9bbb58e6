import type { Effects } from "../outbox/effects";

/** Raw key → JSON value rows of the settings table; typing and defaults live in domain.ts. */
export interface SettingsRepo {
  all(): Promise<Record<string, unknown>>;
  /**
   * Writes `changes` atomically: a value upserts its key, null deletes it (back to the default).
   * `audit` sees the stored rows before and after, inside the transaction.
   */
  update(
    changes: Record<string, unknown>,
    at: Date,
    effects: (before: Record<string, unknown>, after: Record<string, unknown>) => Effects,
  ): Promise<Record<string, unknown>>;
}
