// Domain → wire for GET /admin/emails: field by field, so a payload's sealed values never leave.
import type { EmailRecord } from "./service";
import type { EmailTemplateView } from "./template-admin";
import type { RenderedEmail } from "./templates";

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

export const presentEmailTemplate = (v: EmailTemplateView) => ({
  name: v.name,
  description: v.description,
  placeholders: [...v.placeholders],
  secret_placeholders: [...v.secretPlaceholders],
  subject: v.subject,
  body: v.body,
  customized: v.customized,
  defaults: { subject: v.defaults.subject, body: v.defaults.body },
  updated_at: v.updatedAt ? v.updatedAt.toISOString() : null,
});

export const presentRendered = (r: RenderedEmail) => ({ subject: r.subject, text: r.text, html: r.html });
