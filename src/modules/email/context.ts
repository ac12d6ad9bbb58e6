// What rendering an email reads from the database: the settings emails show and the admin's template
// overrides (templates.ts EmailRenderContext). Read per message by the email handler, so a change
// applies to every email not yet sent.
import type { Repos } from "../../deps";
import { resolveSettings } from "../settings/domain";
import { isEditableTemplate, type EditableTemplate, type TemplateText } from "./editable";
import type { EmailRenderContext } from "./templates";

export async function loadEmailRenderContext(repos: Pick<Repos, "settings" | "emailTemplates">): Promise<EmailRenderContext> {
  const [stored, rows] = await Promise.all([repos.settings.all(), repos.emailTemplates.list()]);
  const s = resolveSettings(stored);
  const overrides: Partial<Record<EditableTemplate, TemplateText>> = {};
  for (const r of rows) if (isEditableTemplate(r.name)) overrides[r.name] = { subject: r.subject, body: r.body };
  return { settings: { vendor_name: s.vendor_name, support_email: s.support_email, portal_url: s.portal_url }, overrides, from: s.email_from };
}
