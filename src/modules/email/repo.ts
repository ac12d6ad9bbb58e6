import type { Effects } from "../outbox/effects";

/** An admin's override of an editable email template (editable.ts EDITABLE_TEMPLATES; no row = the default). */
export interface EmailTemplateOverride {
  name: string;
  subject: string;
  body: string;
  updatedAt: Date;
}

export interface EmailTemplateRepo {
  list(): Promise<EmailTemplateOverride[]>;
  /** Inserts or replaces the override, with `effects` (the audit row) in the same transaction. */
  put(override: EmailTemplateOverride, effects: (before: EmailTemplateOverride | null) => Effects): Promise<EmailTemplateOverride>;
  /** Deletes the override (back to the default); false when there was none (nothing written). */
  remove(name: string, effects: (before: EmailTemplateOverride) => Effects): Promise<boolean>;
}
