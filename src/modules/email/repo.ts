/** An admin's override of an editable email template (editable.ts EDITABLE_TEMPLATES; no row = the default). */
export interface EmailTemplateOverride {
  name: string;
  subject: string;
  body: string;
  updatedAt: Date;
}

/** Override rows, no rules: the verbs (template-admin.ts) write them with their audit row in one unit of work. */
export interface EmailTemplateRepo {
  list(): Promise<EmailTemplateOverride[]>;
  /**
   * The override, held until the unit of work ends, by name (the first override has no row yet), so
   * edits of one template take turns and each audits what it replaced. null when there is none.
   */
  lock(name: string): Promise<EmailTemplateOverride | null>;
  /** Inserts or replaces the override. */
  upsert(override: EmailTemplateOverride): Promise<EmailTemplateOverride>;
  /** Deletes the override (back to the default): the row as it was, or null when there was none. */
  delete(name: string): Promise<EmailTemplateOverride | null>;
}
