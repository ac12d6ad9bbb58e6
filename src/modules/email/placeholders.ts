// The placeholder language of the editable email templates (editable.ts): checking an override,
// filling `{{name}}` with an email's values, and rendering a subject and a body (text and HTML).
import { EDITABLE_DEFINITIONS, NO_EMAIL_SETTINGS, type EditableTemplate, type EmailSettings, type TemplateText } from "./editable";

export const SUBJECT_MAX = 200;
export const BODY_MAX = 20_000;
const PLACEHOLDER = /\{\{\s*([A-Za-z0-9_]*)\s*\}\}/g;

/**
 * Checks a subject and body for `template`: the placeholders it knows, no stray braces, sizes, a
 * one-line subject. Returns field → message (empty when fine).
 */
export function templateTextErrors(template: EditableTemplate, text: TemplateText): Record<string, string> {
  const errors: Record<string, string> = {};
  const def = EDITABLE_DEFINITIONS[template];
  const known = new Set(def.placeholders);
  const secrets = new Set(def.secretPlaceholders ?? []);
  for (const field of ["subject", "body"] as const) {
    const value = text[field];
    if (value.trim() === "") {
      errors[field] = "must not be empty";
      continue;
    }
    const max = field === "subject" ? SUBJECT_MAX : BODY_MAX;
    if (value.length > max) {
      errors[field] = `at most ${max} characters`;
      continue;
    }
    if (field === "subject" && /[\r\n]/.test(value)) {
      errors[field] = "must be one line";
      continue;
    }
    const used = [...value.matchAll(PLACEHOLDER)].map((m) => m[1]!);
    const unknown = used.filter((n) => !known.has(n));
    if (unknown.length) {
      errors[field] = `unknown placeholder ${[...new Set(unknown)].map((n) => `{{${n}}}`).join(", ")}; known: ${[...known].join(", ")}`;
      continue;
    }
    const secret = field === "subject" ? used.filter((n) => secrets.has(n)) : [];
    if (secret.length) {
      errors[field] = `${[...new Set(secret)].map((n) => `{{${n}}}`).join(", ")} may only appear in the body (the subject is stored and listed in the clear)`;
      continue;
    }
    if (/\{\{|\}\}/.test(value.replace(PLACEHOLDER, ""))) {
      errors[field] = "a {{ or }} that is not a placeholder {{name}}";
      continue;
    }
    const lacking = field === "body" ? (def.bodyRequires ?? []).filter((n) => !used.includes(n)) : [];
    if (lacking.length) errors[field] = `must contain ${lacking.map((n) => `{{${n}}}`).join(", ")}: this email is useless without it`;
  }
  return errors;
}

/** `{{name}}` → value; a line whose placeholders are all empty is left out. */
export function fillTemplate(text: string, values: Readonly<Record<string, string>>): string {
  const lines: string[] = [];
  for (const line of text.split("\n")) {
    let placeholders = 0;
    let filled = 0;
    const out = line.replace(PLACEHOLDER, (_, name: string) => {
      placeholders++;
      const v = values[name] ?? "";
      if (v !== "") filled++;
      return v;
    });
    if (placeholders > 0 && filled === 0) continue;
    lines.push(out);
  }
  return lines.join("\n").replace(/\n{3,}/g, "\n\n").trim();
}

/** ISO instant → "2026-12-01 08:00 UTC"; "" when absent or not a date. */
function when(v: unknown): string {
  if (typeof v !== "string") return "";
  const d = new Date(v);
  return Number.isNaN(d.getTime()) ? "" : `${d.toISOString().slice(0, 16).replace("T", " ")} UTC`;
}

const text = (v: unknown): string => (typeof v === "string" ? v.replace(/[\r\n\t]+/g, " ").trim() : typeof v === "number" && Number.isFinite(v) ? String(v) : "");
const days = (v: unknown): string => (typeof v === "number" && Number.isInteger(v) && v >= 0 ? (v === 1 ? "1 day" : `${v} days`) : "");

const REASONS: Record<string, string> = {
  trial_ended: "Your trial period has ended.",
  grace_ended: "Its end date and the grace period after it have passed.",
  past_due_limit: "The payment stayed past due for more than 30 days.",
};

/** The values a template's placeholders take: the email's stored data, and the settings. */
export function placeholderValues(data: Readonly<Record<string, unknown>>, settings: EmailSettings): Record<string, string> {
  return {
    product_name: text(data.product_name),
    plan_name: text(data.plan_name),
    license_id: text(data.license_id),
    key_hint: text(data.key_hint),
    vendor_name: text(settings.vendor_name),
    support_email: text(settings.support_email),
    portal_url: text(settings.portal_url),
    valid_until: when(data.valid_until),
    support_until: when(data.support_until),
    previous_support_until: when(data.previous_support_until),
    license_key: text(data.license_key),
    days_left: days(data.days_left),
    past_due_since: when(data.past_due_since),
    dunning_day: text(data.dunning_day),
    expires_at: when(data.expires_at),
    expired_at: when(data.expired_at),
    reason: typeof data.reason === "string" ? (REASONS[data.reason] ?? "") : "",
    code: text(data.code),
    ttl_minutes: typeof data.ttl_minutes === "number" && Number.isInteger(data.ttl_minutes) && data.ttl_minutes >= 1 ? String(data.ttl_minutes) : "",
    role: data.role === "admin" ? "an admin" : data.role === "member" ? "a member" : "",
    invited_by: text(data.invited_by),
    accept_url: typeof data.accept_url === "string" && /^https?:\/\/\S+$/i.test(data.accept_url.trim()) ? data.accept_url.trim() : "",
  };
}

/** The names of required values missing from `data` (they render empty). */
export function missingValues(template: EditableTemplate, data: Readonly<Record<string, unknown>>): string[] {
  const values = placeholderValues(data, NO_EMAIL_SETTINGS);
  return EDITABLE_DEFINITIONS[template].required.filter((k) => (values[k] ?? "") === "");
}

/** The filled subject, one line. */
export function renderSubject(template: EditableTemplate, data: Readonly<Record<string, unknown>>, settings: EmailSettings, source?: TemplateText | null): string {
  const subject = (source ?? EDITABLE_DEFINITIONS[template].defaults).subject;
  return fillTemplate(subject, placeholderValues(data, settings)).replace(/[\r\n\t]+/g, " ").trim();
}

/** An http(s) address (captured, for split); trailing sentence punctuation stays outside the link. */
const URL_IN_TEXT = /(https?:\/\/[^\s<>"']*[^\s<>"'.,;:!?)])/;

/** The filled body as text and as HTML paragraphs (escaped; http(s) URLs become links). */
export function renderBody(
  template: EditableTemplate,
  data: Readonly<Record<string, unknown>>,
  settings: EmailSettings,
  escapeHtml: (s: string) => string,
  source?: TemplateText | null,
): { text: string; htmlBody: string } {
  const body = fillTemplate((source ?? EDITABLE_DEFINITIONS[template].defaults).body, placeholderValues(data, settings));
  const htmlBody = body
    .split(/\n{2,}/)
    .map((p) => {
      const inner = p
        .split("\n")
        // Split on addresses in the raw text, then escape each part: a link never cuts an entity.
        .map((line) =>
          line
            .split(URL_IN_TEXT)
            .map((part, i) => (i % 2 === 1 ? `<a href="${escapeHtml(part)}" style="color:#1f6feb;">${escapeHtml(part)}</a>` : escapeHtml(part)))
            .join(""),
        )
        .join("<br>\n");
      return `<p style="margin:0 0 16px;">${inner}</p>`;
    })
    .join("\n");
  return { text: `${body}\n`, htmlBody };
}
