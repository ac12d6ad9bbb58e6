import { t } from "../../http/schema";

const DayList = t.Array(t.Integer({ minimum: 1, maximum: 365 }), {
  maxItems: 10,
  description: "Days before the end date; duplicates are dropped, stored longest lead first",
});

export const SettingsSchema = t.Object(
  {
    vendor_name: t.Union([t.String(), t.Null()], { description: "Shown in emails and the portal" }),
    support_email: t.Union([t.String(), t.Null()], { description: "Support address shown to customers" }),
    email_from: t.Union([t.String(), t.Null()], { description: 'From header: "addr" or "Name <addr>"' }),
    portal_url: t.Union([t.String(), t.Null()], { description: "Customer portal base URL used in email links" }),
    reminders_enabled: t.Boolean({ description: "Send expiry and support reminder emails (default true)" }),
    expiry_reminder_days: t.Array(t.Integer(), { description: "Default [7, 3, 1]" }),
    support_reminder_days: t.Array(t.Integer(), { description: "Default [30, 7]" }),
  },
  { title: "Settings" },
);

// Every key is optional; null resets a key to its default. Unknown keys are a 400 (additionalProperties).
export const UpdateSettingsBody = t.Object(
  {
    vendor_name: t.Optional(t.Union([t.String({ minLength: 1, maxLength: 200 }), t.Null()])),
    support_email: t.Optional(t.Union([t.String({ format: "email", maxLength: 320 }), t.Null()])),
    email_from: t.Optional(t.Union([t.String({ minLength: 3, maxLength: 400 }), t.Null()])),
    portal_url: t.Optional(t.Union([t.String({ format: "uri", maxLength: 2048 }), t.Null()])),
    reminders_enabled: t.Optional(t.Union([t.Boolean(), t.Null()])),
    expiry_reminder_days: t.Optional(t.Union([DayList, t.Null()])),
    support_reminder_days: t.Optional(t.Union([DayList, t.Null()])),
  },
  { additionalProperties: false, minProperties: 1 },
);
