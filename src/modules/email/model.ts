import { t } from "../../http/schema";
import type { OutboxStatus } from "../outbox/repo";
import type { EmailTemplate } from "./outbox";

// Spelled out (a mapped array loses the literal types); the type checks below keep them in step with
// OUTBOX_STATUSES and EMAIL_TEMPLATES.
export const EmailStatusSchema = t.Union([t.Literal("pending"), t.Literal("sent"), t.Literal("failed"), t.Literal("logged")], {
  description: "pending (not yet delivered, maybe retrying), sent, failed (given up), logged (no SMTP_URL: written to the log)",
});
export const EmailTemplateSchema = t.Union([t.Literal("sign_in_code"), t.Literal("seat_invite"), t.Literal("webhook_disabled")]);
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
    template: t.String({ description: "sign_in_code, seat_invite or webhook_disabled" }),
    to: t.Union([t.String(), t.Null()]),
    subject: t.Union([t.String(), t.Null()], { description: "The subject as rendered now from the stored values; null for an unknown template" }),
    status: EmailStatusSchema,
    attempts: t.Integer({ description: "Failed delivery attempts so far" }),
    last_error: t.Union([t.String(), t.Null()], { description: "The last failure, e.g. the SMTP server's answer" }),
    created_at: t.String({ format: "date-time" }),
    sent_at: t.Union([t.String({ format: "date-time" }), t.Null()], { description: "When it was sent (or logged)" }),
  },
  { title: "Email" },
);
