import { t } from "../../http/schema";

const DayList = t.Array(t.Integer({ minimum: 1, maximum: 365 }), {
  maxItems: 10,
  description: "Days before the end date; duplicates are dropped, stored longest lead first",
});

// Every setting is stored and returned today; the features that read them (emails, the customer
// portal, the lifecycle pass's reminders) arrive in later versions.
const D = {
  vendor_name: "The vendor name lifecycle emails show ({{vendor_name}}); a line showing it is left out while it is unset",
  support_email: "The support address lifecycle emails show ({{support_email}}); a line showing it is left out while it is unset",
  email_from: 'The From header of every email, "addr@example.com" or "Name <addr@example.com>"; null: the MAIL_FROM configuration. The address should be one the SMTP server may send as',
  portal_url: "The customer portal's base URL, linked from lifecycle emails ({{portal_url}}); a trailing / is removed",
  reminders_enabled: "The lifecycle pass sends expiry and support reminders (default true); expiry notices, support-lapse notices and dunning emails are sent either way",
  expiry_reminder_days: "Days before valid_until at which the lifecycle pass sends an expiry reminder (default [7, 3, 1]); only the most urgent due one is sent",
  support_reminder_days: "Days before support_until at which the lifecycle pass sends a support reminder (default [30, 7])",
};

export const SettingsSchema = t.Object(
  {
    vendor_name: t.Union([t.String(), t.Null()], { description: D.vendor_name }),
    support_email: t.Union([t.String(), t.Null()], { description: D.support_email }),
    email_from: t.Union([t.String(), t.Null()], { description: D.email_from }),
    portal_url: t.Union([t.String(), t.Null()], { description: D.portal_url }),
    reminders_enabled: t.Boolean({ description: D.reminders_enabled }),
    expiry_reminder_days: t.Array(t.Integer(), { description: D.expiry_reminder_days }),
    support_reminder_days: t.Array(t.Integer(), { description: D.support_reminder_days }),
  },
  { title: "Settings" },
);

// Every key is optional; null resets a key to its default. Unknown keys are a 400 (additionalProperties).
export const UpdateSettingsBody = t.Object(
  {
    vendor_name: t.Optional(t.Union([t.String({ minLength: 1, maxLength: 200 }), t.Null()], { description: D.vendor_name })),
    support_email: t.Optional(t.Union([t.String({ format: "email", maxLength: 320 }), t.Null()], { description: D.support_email })),
    email_from: t.Optional(t.Union([t.String({ minLength: 3, maxLength: 400 }), t.Null()], { description: D.email_from })),
    portal_url: t.Optional(t.Union([t.String({ format: "uri", maxLength: 2048 }), t.Null()], { description: D.portal_url })),
    reminders_enabled: t.Optional(t.Union([t.Boolean(), t.Null()], { description: D.reminders_enabled })),
    expiry_reminder_days: t.Optional(t.Union([DayList, t.Null()], { description: D.expiry_reminder_days })),
    support_reminder_days: t.Optional(t.Union([DayList, t.Null()], { description: D.support_reminder_days })),
  },
  { additionalProperties: false, minProperties: 1 },
);
