// Domain → wire for GET /admin/emails: field by field, so a payload's sealed values never leave.
import type { EmailRecord } from "./service";

export const presentEmail = (e: EmailRecord) => ({
  id: e.id,
  template: e.template,
  to: e.to,
  subject: e.subject,
  status: e.status,
  attempts: e.attempts,
  last_error: e.lastError,
  created_at: e.createdAt.toISOString(),
  sent_at: e.sentAt ? e.sentAt.toISOString() : null,
});
