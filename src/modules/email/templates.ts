// The email templates: subject, plain text and HTML from a template's values. Pure. Every value is
// HTML-escaped in the HTML part (a product name is admin input, an inviter's name user input), and
// line breaks are removed from the subject (a header).
import type { EmailTemplate, OpenedEmail } from "./outbox";
import { isAccountTemplate, isLifecycleTemplate, NO_EMAIL_SETTINGS, secretPlaceholders, type EditableTemplate, type EmailSettings, type TemplateText } from "./editable";
import { missingValues, renderBody, renderSubject } from "./placeholders";

/**
 * What rendering reads besides the message: the settings emails show (vendor_name, support_email,
 * portal_url) and the admin's template overrides. Read when the message is sent, so a change to
 * either applies to emails not yet sent.
 */
export interface EmailRenderContext {
  settings: EmailSettings;
  overrides: Partial<Record<EditableTemplate, TemplateText>>;
  /** The From header the admin set (setting email_from); null: MAIL_FROM. */
  from: string | null;
}

export const DEFAULT_RENDER_CONTEXT: EmailRenderContext = { settings: NO_EMAIL_SETTINGS, overrides: {}, from: null };

export interface RenderedEmail {
  subject: string;
  text: string;
  html: string;
}

export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);
}

const oneLine = (s: string) => s.replace(/[\r\n\t]+/g, " ").trim();

/** Thrown for values a template cannot render: nothing a retry could fix. */
export class TemplateValueError extends TypeError {
  constructor(template: string, field: string) {
    super(`email ${template}: missing or invalid value "${field}"`);
    this.name = "TemplateValueError";
  }
}

function str(template: string, values: Record<string, unknown>, field: string): string {
  const v = values[field];
  if (typeof v !== "string" || v.trim() === "") throw new TemplateValueError(template, field);
  return v;
}

/** The subject: from the non-secret values only, so GET /admin/emails can show it. */
export function emailSubject(template: EmailTemplate, data: Record<string, unknown>, ctx: EmailRenderContext = DEFAULT_RENDER_CONTEXT): string {
  // Lifecycle and payment templates always render from the placeholder text (placeholders.ts);
  // sign_in_code and seat_invite only while an admin override is stored (their default is the
  // designed email below, whose words the template's `defaults` repeat).
  if (isLifecycleTemplate(template) || (isAccountTemplate(template) && ctx.overrides[template])) return renderSubject(template, clearValues(template, data), ctx.settings, ctx.overrides[template]);
  switch (template) {
    case "sign_in_code":
      return "Your sign-in code";
    case "seat_invite": {
      const product = typeof data.product_name === "string" && data.product_name.trim() !== "" ? oneLine(data.product_name) : "a product";
      return `You are invited to ${product}`;
    }
    case "webhook_disabled": {
      const host = typeof data.url_host === "string" && data.url_host.trim() !== "" ? oneLine(data.url_host) : "an endpoint";
      return `Webhook endpoint disabled: ${host}`;
    }
  }
}

/** The clear values without the names of secret placeholders: those come from the sealed values only. */
function clearValues(template: EditableTemplate, data: Record<string, unknown>): Record<string, unknown> {
  const secret = secretPlaceholders(template);
  return Object.fromEntries(Object.entries(data).filter(([k]) => !secret.includes(k)));
}

export function renderEmail(email: OpenedEmail, ctx: EmailRenderContext = DEFAULT_RENDER_CONTEXT): RenderedEmail {
  // Sealed values (a purchased license's key, a sign-in code, an invite link) fill the template's
  // secret placeholders, body only.
  const template = email.template;
  if (isLifecycleTemplate(template) || (isAccountTemplate(template) && ctx.overrides[template])) return renderLifecycle(template, { ...clearValues(template, email.data), ...email.secret }, ctx);
  switch (template) {
    case "sign_in_code":
      return signInCode(email);
    case "seat_invite":
      return seatInvite(email);
    case "webhook_disabled":
      return webhookDisabled(email);
  }
}

/**
 * To the admins when Keyward stopped delivering to a webhook endpoint: the receiver answered 410 Gone,
 * or too many attempts in a row failed. Names the endpoint by its host and description only (a
 * webhook URL's path can carry the receiver's own token).
 */
function webhookDisabled({ data }: OpenedEmail): RenderedEmail {
  const host = oneLine(str("webhook_disabled", data, "url_host"));
  const endpointId = oneLine(str("webhook_disabled", data, "endpoint_id"));
  const description = typeof data.description === "string" && data.description.trim() !== "" ? oneLine(data.description) : null;
  const failures = data.failures;
  let why: string;
  if (data.reason === "gone") why = "The receiver answered 410 Gone, which asks senders to stop.";
  else if (data.reason === "failures" && typeof failures === "number" && Number.isInteger(failures) && failures > 0)
    why = `The last ${failures} delivery attempts in a row failed.`;
  else throw new TemplateValueError("webhook_disabled", "reason");
  const subject = emailSubject("webhook_disabled", data);
  const lead = `Keyward stopped sending webhooks to ${host}${description ? ` (${description})` : ""}.`;
  const next =
    "Events are still recorded, and deliveries not yet made wait while the endpoint is disabled. Once the receiver works again, enable the endpoint:";
  const call = `POST /api/v1/admin/webhooks/${endpointId}/enable`;
  const text = [lead, ``, why, ``, next, ``, `    ${call}`, ``, `Endpoint id: ${endpointId}`, ``].join("\n");
  const html = layout(
    subject,
    [
      `<h1 style="margin:0 0 16px;font-size:20px;line-height:1.3;">Webhook endpoint disabled</h1>`,
      `<p style="margin:0 0 16px;">${escapeHtml(lead)}</p>`,
      `<p style="margin:0 0 16px;">${escapeHtml(why)}</p>`,
      `<p style="margin:0 0 8px;">${escapeHtml(next)}</p>`,
      `<p style="margin:0 0 24px;font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:14px;word-break:break-all;">${escapeHtml(call)}</p>`,
      `<p style="margin:0;color:#57606a;font-size:14px;">Endpoint id: ${escapeHtml(endpointId)}</p>`,
    ].join("\n"),
  );
  return { subject, text, html };
}

/** An editable email (editable.ts, placeholders.ts): the override or the default, filled, escaped in the HTML part. */
export function renderLifecycle(template: EditableTemplate, data: Record<string, unknown>, ctx: EmailRenderContext, source?: TemplateText | null): RenderedEmail {
  const missing = missingValues(template, data);
  if (missing.length) throw new TemplateValueError(template, missing[0]!);
  const chosen = source ?? ctx.overrides[template] ?? null;
  const subject = renderSubject(template, data, ctx.settings, chosen);
  const { text, htmlBody } = renderBody(template, data, ctx.settings, escapeHtml, chosen);
  return { subject, text, html: layout(subject, htmlBody) };
}

function signInCode({ data, secret }: OpenedEmail): RenderedEmail {
  const code = str("sign_in_code", secret, "code");
  const ttl = data.ttl_minutes;
  if (typeof ttl !== "number" || !Number.isInteger(ttl) || ttl < 1) throw new TemplateValueError("sign_in_code", "ttl_minutes");
  const expires = `It expires in ${ttl} ${ttl === 1 ? "minute" : "minutes"}.`;
  const ignore = "If you did not ask to sign in, you can ignore this email: nobody can sign in without this code.";
  const subject = emailSubject("sign_in_code", data);
  const text = [`Your sign-in code is:`, ``, `    ${code}`, ``, expires, ``, ignore, ``].join("\n");
  const html = layout(
    subject,
    [
      `<h1 style="margin:0 0 16px;font-size:20px;line-height:1.3;">Your sign-in code</h1>`,
      `<p style="margin:0 0 8px;">Enter this code to sign in:</p>`,
      `<p style="margin:24px 0;font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:34px;font-weight:700;letter-spacing:8px;">${escapeHtml(code)}</p>`,
      `<p style="margin:0 0 16px;">${escapeHtml(expires)}</p>`,
      `<p style="margin:0;color:#57606a;font-size:14px;">${escapeHtml(ignore)}</p>`,
    ].join("\n"),
  );
  return { subject, text, html };
}

function seatInvite({ data, secret }: OpenedEmail): RenderedEmail {
  const url = str("seat_invite", secret, "accept_url");
  if (!/^https?:\/\//i.test(url)) throw new TemplateValueError("seat_invite", "accept_url");
  const product = oneLine(str("seat_invite", data, "product_name"));
  const role = data.role === "admin" ? "an admin" : data.role === "member" ? "a member" : null;
  if (role === null) throw new TemplateValueError("seat_invite", "role");
  const inviter = typeof data.invited_by === "string" && data.invited_by.trim() !== "" ? oneLine(data.invited_by) : null;
  const expiresAt = new Date(str("seat_invite", data, "expires_at"));
  if (Number.isNaN(expiresAt.getTime())) throw new TemplateValueError("seat_invite", "expires_at");
  const expires = `${expiresAt.toISOString().slice(0, 16).replace("T", " ")} UTC`;

  const subject = emailSubject("seat_invite", data);
  const lead = `${inviter ?? "Someone"} invited you to use ${product} as ${role}.`;
  const ignore = "If you were not expecting this invitation, you can ignore this email.";
  const text = [lead, ``, `Accept the invitation:`, url, ``, `The invitation expires on ${expires}.`, ``, ignore, ``].join("\n");
  const html = layout(
    subject,
    [
      `<h1 style="margin:0 0 16px;font-size:20px;line-height:1.3;">You are invited to ${escapeHtml(product)}</h1>`,
      `<p style="margin:0 0 24px;">${escapeHtml(lead)}</p>`,
      `<p style="margin:0 0 24px;"><a href="${escapeHtml(url)}" style="display:inline-block;padding:12px 24px;background:#1f6feb;color:#ffffff;text-decoration:none;border-radius:6px;font-weight:600;">Accept the invitation</a></p>`,
      `<p style="margin:0 0 8px;font-size:14px;color:#57606a;">Or open this link:</p>`,
      `<p style="margin:0 0 24px;font-size:14px;word-break:break-all;"><a href="${escapeHtml(url)}" style="color:#1f6feb;">${escapeHtml(url)}</a></p>`,
      `<p style="margin:0 0 16px;">The invitation expires on ${escapeHtml(expires)}.</p>`,
      `<p style="margin:0;color:#57606a;font-size:14px;">${escapeHtml(ignore)}</p>`,
    ].join("\n"),
  );
  return { subject, text, html };
}

/** A clean single-column layout with inline styles (mail clients drop <style> blocks and scripts). */
function layout(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
</head>
<body style="margin:0;padding:0;background:#f4f5f7;">
<table role="presentation" width="100%" cellpadding="0" cellspacing="0" style="background:#f4f5f7;">
<tr><td align="center" style="padding:32px 16px;">
<table role="presentation" width="100%" cellpadding="0" cellspacing="0" style="max-width:520px;background:#ffffff;border:1px solid #d8dee4;border-radius:8px;">
<tr><td style="padding:32px;font-family:-apple-system,BlinkMacSystemFont,'Segoe UI',Roboto,Helvetica,Arial,sans-serif;font-size:16px;line-height:1.5;color:#1f2328;">
${body}
</td></tr>
</table>
</td></tr>
</table>
</body>
</html>
`;
}
