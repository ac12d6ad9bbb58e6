// Admin verbs over the editable email templates (lifecycle, payment, sign-in code, seat invite): list,
// override (subject and body in the placeholder syntax of placeholders.ts; unknown placeholders refused
// at save), reset to the default, preview. System-wide, like the settings the emails show.
import type { Deps } from "../../deps";
import { assertSystemWide, type Actor } from "../../shared/actor";
import { AppError, validationError } from "../../shared/errors";
import { loadEmailRenderContext } from "./context";
import { EDITABLE_DEFINITIONS, EDITABLE_TEMPLATES, isAccountTemplate, isEditableTemplate, secretPlaceholders, type EditableTemplate, type TemplateText } from "./editable";
import { templateTextErrors } from "./placeholders";
import type { EmailTemplateOverride } from "./repo";
import { renderEmail, renderLifecycle, TemplateValueError, type RenderedEmail } from "./templates";

export interface EmailTemplateView {
  name: EditableTemplate;
  description: string;
  placeholders: readonly string[];
  /** Filled from the email's sealed values: body only (and, for the sign-in code and invite link, required there). */
  secretPlaceholders: readonly string[];
  subject: string;
  body: string;
  customized: boolean;
  defaults: TemplateText;
  updatedAt: Date | null;
}

function view(name: EditableTemplate, override: EmailTemplateOverride | null): EmailTemplateView {
  const def = EDITABLE_DEFINITIONS[name];
  return {
    name,
    description: def.description,
    placeholders: def.placeholders,
    secretPlaceholders: def.secretPlaceholders ?? [],
    subject: override?.subject ?? def.defaults.subject,
    body: override?.body ?? def.defaults.body,
    customized: override !== null,
    defaults: def.defaults,
    updatedAt: override?.updatedAt ?? null,
  };
}

function templateName(name: string): EditableTemplate {
  if (!isEditableTemplate(name)) {
    throw new AppError("NOT_FOUND", { message: `No editable email template named "${name}".`, details: { template: name, known: [...EDITABLE_TEMPLATES] } });
  }
  return name;
}

/** Line endings as LF, so the stored text and the placeholder rule see one kind of line. */
const normalize = (t: TemplateText): TemplateText => ({ subject: t.subject, body: t.body.replace(/\r\n?/g, "\n") });

function checked(name: EditableTemplate, text: TemplateText): TemplateText {
  const errors = templateTextErrors(name, text);
  if (Object.keys(errors).length) throw validationError(errors);
  return text;
}

export async function listEmailTemplates(deps: Deps, actor: Actor): Promise<EmailTemplateView[]> {
  assertSystemWide(actor);
  const rows = new Map((await deps.repos.emailTemplates.list()).map((r) => [r.name, r]));
  return EDITABLE_TEMPLATES.map((name) => view(name, rows.get(name) ?? null));
}

export async function putEmailTemplate(deps: Deps, actor: Actor, rawName: string, input: TemplateText): Promise<EmailTemplateView> {
  assertSystemWide(actor);
  const name = templateName(rawName);
  const text = checked(name, normalize(input));
  const at = deps.clock.now();
  // One unit of work: the override as it was (held), the new one, and the audit row of the change.
  const saved = await deps.db.transaction(async ({ repos }) => {
    const before = await repos.emailTemplates.lock(name);
    const row = await repos.emailTemplates.upsert({ name, ...text, updatedAt: at });
    await repos.outbox.writeEffects({
      audit: {
        actor,
        action: "email_template.update",
        entityType: "email_template",
        entityId: name,
        productId: null,
        changes: { subject: { from: before?.subject ?? null, to: text.subject }, body: { from: before?.body ?? null, to: text.body } },
        at,
      },
    });
    return row;
  });
  return view(name, saved);
}

export async function resetEmailTemplate(deps: Deps, actor: Actor, rawName: string): Promise<EmailTemplateView> {
  assertSystemWide(actor);
  const name = templateName(rawName);
  const at = deps.clock.now();
  // Nothing to reset (no override): nothing is written, no audit row.
  await deps.db.transaction(async ({ repos }) => {
    const before = await repos.emailTemplates.delete(name);
    if (!before) return;
    await repos.outbox.writeEffects({
      audit: {
        actor,
        action: "email_template.reset",
        entityType: "email_template",
        entityId: name,
        productId: null,
        changes: { subject: { from: before.subject, to: null }, body: { from: before.body, to: null } },
        at,
      },
    });
  });
  return view(name, null);
}

export interface PreviewInput {
  subject?: string;
  body?: string;
  /** Values over the template's sample data (strings or integers). */
  data?: Record<string, string | number>;
}

/**
 * Renders the template (or the given subject/body, checked as a save would) with sample or given data
 * and the current settings. The sign-in code and the invite without an override and without a given
 * subject/body render as sent: their designed default (templates.ts).
 */
export async function previewEmailTemplate(deps: Deps, actor: Actor, rawName: string, input: PreviewInput): Promise<RenderedEmail> {
  assertSystemWide(actor);
  const name = templateName(rawName);
  const ctx = await loadEmailRenderContext(deps.repos);
  const current = ctx.overrides[name] ?? EDITABLE_DEFINITIONS[name].defaults;
  const source = checked(name, normalize({ subject: input.subject ?? current.subject, body: input.body ?? current.body }));
  const data: Record<string, unknown> = { ...EDITABLE_DEFINITIONS[name].sample, ...input.data };
  try {
    if (isAccountTemplate(name) && !ctx.overrides[name] && input.subject === undefined && input.body === undefined) {
      const secrets = secretPlaceholders(name);
      const clear = Object.fromEntries(Object.entries(data).filter(([k]) => !secrets.includes(k)));
      const secret = Object.fromEntries(Object.entries(data).filter(([k]) => secrets.includes(k)).map(([k, v]) => [k, String(v)]));
      return renderEmail({ template: name, to: "preview@example.com", data: clear, secret }, ctx);
    }
    return renderLifecycle(name, data, ctx, source);
  } catch (e) {
    if (e instanceof TemplateValueError) throw validationError({ data: e.message });
    throw e;
  }
}
