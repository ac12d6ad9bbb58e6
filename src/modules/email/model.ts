import { t } from "../../http/schema";
import type { OutboxStatus } from "../outbox/repo";
import type { EmailTemplate } from "./outbox";

// Spelled out (a mapped array loses the literal types); the type checks below keep them in step with
// OUTBOX_STATUSES and EMAIL_TEMPLATES.
export const EmailStatusSchema = t.Union([t.Literal("pending"), t.Literal("sent"), t.Literal("failed"), t.Literal("logged")], {
  description: "pending (not yet delivered, maybe retrying), sent, failed (given up), logged (no SMTP_URL: written to the log)",
});
export const EmailTemplateSchema = t.Union([
  t.Literal("sign_in_code"),
  t.Literal("seat_invite"),
  t.Literal("webhook_disabled"),
  t.Literal("expiry_reminder"),
  t.Literal("support_reminder"),
  t.Literal("support_ended"),
  t.Literal("dunning"),
  t.Literal("license_expired"),
  t.Literal("support_renewed"),
  t.Literal("license_purchased"),
]);
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : never) : never;
const statusesMatch: Same<typeof EmailStatusSchema.static, OutboxStatus> = true;
const templatesMatch: Same<typeof EmailTemplateSchema.static, EmailTemplate> = true;
void statusesMatch;
void templatesMatch;

export const EmailListQuery = t.Object({
  status: t.Optional(EmailStatusSchema),
  template: t.Optional(EmailTemplateSchema),
  to: t.Optional(t.String({ minLength: 1, maxLength: 320, description: "Recipient, exact match, case-insensitive" })),
  cursor: t.Optional(t.String({ maxLength: 512 })),
  limit: t.Optional(t.QueryInteger({ minimum: 1, maximum: 200 })),
});

export const EmailSchema = t.Object(
  {
    id: t.String(),
    template: t.String({ description: "sign_in_code, seat_invite, webhook_disabled, expiry_reminder, support_reminder, support_ended, dunning, license_expired, support_renewed or license_purchased; all but webhook_disabled are editable (/admin/email-templates)" }),
    to: t.Union([t.String(), t.Null()]),
    subject: t.Union([t.String(), t.Null()], { description: "The subject as rendered now from the stored values (and, for editable templates, the current settings and template override); null for an unknown template" }),
    status: EmailStatusSchema,
    attempts: t.Integer({ description: "Failed delivery attempts so far" }),
    last_error: t.Union([t.String(), t.Null()], { description: "The last failure, e.g. the SMTP server's answer" }),
    created_at: t.String({ format: "date-time" }),
    sent_at: t.Union([t.String({ format: "date-time" }), t.Null()], { description: "When it was sent (or logged)" }),
  },
  { title: "Email" },
);

export const EmailTemplateNameParams = t.Object({
  name: t.String({ minLength: 1, maxLength: 64, description: "expiry_reminder, support_reminder, support_ended, dunning, license_expired, support_renewed, license_purchased, sign_in_code or seat_invite (webhook_disabled is not editable)" }),
});

const TemplateTextSchema = t.Object(
  {
    subject: t.String({ description: "One line; placeholders like {{product_name}}" }),
    body: t.String({ description: "Plain text; placeholders like {{product_name}}; blank lines separate paragraphs" }),
  },
  { title: "EmailTemplateText" },
);

export const EmailTemplateViewSchema = t.Object(
  {
    name: t.String(),
    description: t.String({ description: "When it is sent" }),
    placeholders: t.Array(t.String(), { description: "The names this template accepts as {{name}}" }),
    secret_placeholders: t.Array(t.String(), {
      description:
        "Placeholders filled from the email's sealed values (license_key, code, accept_url): allowed in the body only; code (sign_in_code) and accept_url (seat_invite) are required in an override's body",
    }),
    subject: t.String({ description: "In effect: the override, or the default" }),
    body: t.String({ description: "In effect: the override, or the default" }),
    customized: t.Boolean({ description: "An admin override is stored (DELETE returns to the default)" }),
    defaults: TemplateTextSchema,
    updated_at: t.Union([t.String({ format: "date-time" }), t.Null()], { description: "When the override was saved; null for the default" }),
  },
  { title: "EmailTemplate" },
);

export const PutEmailTemplateBody = t.Object(
  {
    subject: t.String({ minLength: 1, maxLength: 200, description: "One line; only this template's placeholders" }),
    body: t.String({
      minLength: 1,
      maxLength: 20000,
      description: "Plain text; only this template's placeholders. sign_in_code must contain {{code}} and seat_invite {{accept_url}}",
    }),
  },
  { additionalProperties: false },
);

export const PreviewEmailTemplateBody = t.Object(
  {
    subject: t.Optional(t.String({ minLength: 1, maxLength: 200, description: "Preview this subject instead of the one in effect" })),
    body: t.Optional(t.String({ minLength: 1, maxLength: 20000, description: "Preview this body instead of the one in effect" })),
    data: t.Optional(
      t.Record(t.String({ maxLength: 64 }), t.Union([t.String({ maxLength: 500 }), t.Integer()]), {
        description: "Values over the sample data, e.g. {\"product_name\": \"Acme Editor\", \"days_left\": 3}",
      }),
    ),
  },
  { additionalProperties: false },
);

export const RenderedEmailSchema = t.Object(
  {
    subject: t.String(),
    text: t.String(),
    html: t.String(),
  },
  { title: "RenderedEmail" },
);
