/**
 * Raw key → JSON value rows of the settings table; typing and defaults live in domain.ts, the change
 * (lock, read, write, audit) in service.ts applySettingsChange.
 */
export interface SettingsRepo {
  all(): Promise<Record<string, unknown>>;
  /** Takes the settings document's turn until the unit of work ends: changes apply one after another. */
  lock(): Promise<void>;
  put(key: string, value: unknown, at: Date): Promise<void>;
  /** Deletes the key (back to its default). */
  remove(key: string): Promise<void>;
}
