// The editable email templates, their names and defaults: the lifecycle ones (sent by the lifecycle pass, modules/lifecycle):
// expiry reminder, support reminder, support lapsed, dunning and expired notice; the payment ones
// (modules/payments): support renewal confirmation and the purchased license's key; and the account
// ones: the sign-in code (modules/sign-in) and the seat invite (modules/seats). Each is a subject and a plain-text
// body in a small placeholder syntax, `{{product_name}}` (placeholders.ts): the default below, or an
// admin's override (PUT /admin/email-templates/{name}). Rendering only substitutes known values — no
// expressions, no code, no HTML from the template: the HTML part is the filled text, escaped, in paragraphs.
//
// Rules: a placeholder is `{{name}}` (spaces inside the braces allowed); names outside the template's
// list, and any other `{{` or `}}`, are refused when an override is saved. A line whose placeholders
// all render empty (an unset setting such as portal_url) is left out, so the defaults need no
// conditionals.
//
// The account templates (sign_in_code, seat_invite) keep their designed HTML (a heading, the code in
// large type, an "Accept" button: templates.ts) while no override is stored; their `defaults` below
// are the same words as text and fill to exactly that email's plain-text part. An override renders
// like every other editable template (escaped paragraphs), and must carry the secret (the code, the
// link) in its body: an email without it is useless.

/** The settings lifecycle emails show (modules/settings). */
export interface EmailSettings {
  vendor_name: string | null;
  support_email: string | null;
  portal_url: string | null;
}

export const NO_EMAIL_SETTINGS: EmailSettings = { vendor_name: null, support_email: null, portal_url: null };

export interface TemplateText {
  subject: string;
  body: string;
}

export const LIFECYCLE_TEMPLATES = [
  "expiry_reminder",
  "support_reminder",
  "support_ended",
  "dunning",
  "license_expired",
  "support_renewed",
  "license_purchased",
] as const;
export type LifecycleTemplate = (typeof LIFECYCLE_TEMPLATES)[number];
export const isLifecycleTemplate = (v: unknown): v is LifecycleTemplate => (LIFECYCLE_TEMPLATES as readonly unknown[]).includes(v);

/** The account emails an admin can edit too (their default rendering stays templates.ts's own). */
export const ACCOUNT_TEMPLATES = ["sign_in_code", "seat_invite"] as const;
export type AccountTemplate = (typeof ACCOUNT_TEMPLATES)[number];
export const isAccountTemplate = (v: unknown): v is AccountTemplate => (ACCOUNT_TEMPLATES as readonly unknown[]).includes(v);

/** Every template PUT /admin/email-templates/{name} accepts, in the order GET lists them. */
export const EDITABLE_TEMPLATES = [...LIFECYCLE_TEMPLATES, ...ACCOUNT_TEMPLATES] as const;
export type EditableTemplate = (typeof EDITABLE_TEMPLATES)[number];
export const isEditableTemplate = (v: unknown): v is EditableTemplate => (EDITABLE_TEMPLATES as readonly unknown[]).includes(v);

const COMMON = ["product_name", "plan_name", "license_id", "key_hint", "vendor_name", "support_email", "portal_url"] as const;

interface Definition {
  description: string;
  placeholders: readonly string[];
  /**
   * Placeholders filled from the email's sealed values (modules/email/outbox.ts sealedEmail), e.g. a
   * license key: allowed in the body only, since the subject is rendered from the clear values and
   * listed by GET /admin/emails.
   */
  secretPlaceholders?: readonly string[];
  /** Secret placeholders an override's body must use (the email is pointless without them). */
  bodyRequires?: readonly string[];
  /** Values of the email's stored data that must be present (else the message cannot render). */
  required: readonly string[];
  defaults: TemplateText;
  /** Stored data for previews. */
  sample: Record<string, unknown>;
}

const SAMPLE_BASE = {
  license_id: "0192f0c4-5d6e-7a8b-9c0d-1e2f3a4b5c6d",
  product_name: "Acme Editor",
  plan_name: "Pro",
  key_hint: "Q7ZK",
};

const FOOTER = ["Manage your license: {{portal_url}}", "", "Questions? Write to {{support_email}}.", "", "{{vendor_name}}"].join("\n");
const LICENSE = "{{product_name}} ({{plan_name}}, key ending {{key_hint}})";

export const LIFECYCLE_DEFINITIONS: Readonly<Record<LifecycleTemplate, Definition>> = {
  expiry_reminder: {
    description: "Sent 7, 3 and 1 days (setting expiry_reminder_days) before a usable license's valid_until",
    placeholders: [...COMMON, "valid_until", "days_left"],
    required: ["product_name", "valid_until", "days_left"],
    defaults: {
      subject: "Your {{product_name}} license expires in {{days_left}}",
      body: [`Hello,`, ``, `your license for ${LICENSE} expires on {{valid_until}}, in {{days_left}}.`, ``, `Renew it to keep using {{product_name}} without interruption.`, ``, FOOTER].join("\n"),
    },
    sample: { ...SAMPLE_BASE, valid_until: "2026-12-01T00:00:00.000Z", days_left: 7 },
  },
  support_reminder: {
    description: "Sent 30 and 7 days (setting support_reminder_days) before a usable license's support_until",
    placeholders: [...COMMON, "support_until", "days_left"],
    required: ["product_name", "support_until", "days_left"],
    defaults: {
      subject: "Support and updates for {{product_name}} end in {{days_left}}",
      body: [
        `Hello,`,
        ``,
        `the support and updates window of your license for ${LICENSE} ends on {{support_until}}, in {{days_left}}.`,
        ``,
        `The license keeps working after that date. Renew support to keep receiving new releases.`,
        ``,
        FOOTER,
      ].join("\n"),
    },
    sample: { ...SAMPLE_BASE, support_until: "2026-12-21T00:00:00.000Z", days_left: 30 },
  },
  support_ended: {
    description: "Sent when support_until passes on a usable license (the license stays valid; new releases are not available to it)",
    placeholders: [...COMMON, "support_until"],
    required: ["product_name", "support_until"],
    defaults: {
      subject: "Support and updates for {{product_name}} have ended",
      body: [
        `Hello,`,
        ``,
        `the support and updates window of your license for ${LICENSE} ended on {{support_until}}.`,
        ``,
        `The license keeps working, but releases published from now on are not available to it. Renew support to get updates again.`,
        ``,
        FOOTER,
      ].join("\n"),
    },
    sample: { ...SAMPLE_BASE, support_until: "2026-11-20T00:00:00.000Z" },
  },
  dunning: {
    description: "Sent on day 1, 7 and 14 of a past_due episode",
    placeholders: [...COMMON, "past_due_since", "dunning_day", "expires_at"],
    required: ["product_name", "past_due_since"],
    defaults: {
      subject: "Payment for your {{product_name}} license is past due",
      body: [
        `Hello,`,
        ``,
        `we could not collect the payment for your license for ${LICENSE}. It has been past due since {{past_due_since}}.`,
        ``,
        `Please update your payment details. Unless the payment goes through, the license expires on {{expires_at}}.`,
        ``,
        FOOTER,
      ].join("\n"),
    },
    sample: { ...SAMPLE_BASE, past_due_since: "2026-11-14T08:00:00.000Z", dunning_day: 7, expires_at: "2026-12-14T08:00:00.000Z" },
  },
  license_expired: {
    description: "Sent when the lifecycle pass expires a license (trial ended, grace period over, or past due for more than 30 days)",
    placeholders: [...COMMON, "expired_at", "valid_until", "reason"],
    required: ["product_name", "expired_at"],
    defaults: {
      subject: "Your {{product_name}} license has expired",
      body: [`Hello,`, ``, `your license for ${LICENSE} expired on {{expired_at}}.`, ``, `{{reason}}`, ``, `Renew it to use {{product_name}} again.`, ``, FOOTER].join("\n"),
    },
    sample: { ...SAMPLE_BASE, expired_at: "2026-11-21T08:00:00.000Z", valid_until: "2026-11-14T00:00:00.000Z", reason: "grace_ended" },
  },
  support_renewed: {
    description: "Sent when a paid support renewal (Stripe checkout) extends support_until",
    placeholders: [...COMMON, "support_until", "previous_support_until"],
    required: ["product_name", "support_until"],
    defaults: {
      subject: "Support and updates for {{product_name}} renewed until {{support_until}}",
      body: [
        `Hello,`,
        ``,
        `thank you for renewing support and updates for ${LICENSE}.`,
        ``,
        `Your support window now ends on {{support_until}}. New releases published until then are available to your license.`,
        ``,
        FOOTER,
      ].join("\n"),
    },
    sample: { ...SAMPLE_BASE, support_until: "2027-11-20T00:00:00.000Z", previous_support_until: "2026-11-20T00:00:00.000Z" },
  },
  license_purchased: {
    description: "Sent when a purchase (Stripe checkout) issues a license; carries the license key (sealed in the outbox, body only)",
    placeholders: [...COMMON, "license_key", "valid_until", "support_until"],
    secretPlaceholders: ["license_key"],
    // The email exists to deliver the key: an override without it is refused.
    bodyRequires: ["license_key"],
    required: ["product_name", "license_key"],
    defaults: {
      subject: "Your {{product_name}} license",
      body: [
        `Hello,`,
        ``,
        `thank you for your purchase of {{product_name}} ({{plan_name}}). Your license key is:`,
        ``,
        `{{license_key}}`,
        ``,
        `Enter it in {{product_name}} to activate it. Keep this email: the key is your proof of purchase.`,
        ``,
        `Valid until: {{valid_until}}`,
        `Support and updates until: {{support_until}}`,
        ``,
        FOOTER,
      ].join("\n"),
    },
    sample: { ...SAMPLE_BASE, license_key: "ACME-7H2QX9KD-M4TRZ8WP-B6NC3VYE-LQ5GJ7Q7ZK", valid_until: "2027-11-20T00:00:00.000Z", support_until: "2027-11-20T00:00:00.000Z" },
  },
};

const SETTINGS = ["vendor_name", "support_email", "portal_url"] as const;

export const ACCOUNT_DEFINITIONS: Readonly<Record<AccountTemplate, Definition>> = {
  sign_in_code: {
    description:
      "Sent when someone asks for a sign-in code (POST /auth/sign-in-code) with an email address Keyward knows; carries the code (sealed in the outbox, body only, required in an override's body)",
    placeholders: ["code", "ttl_minutes", ...SETTINGS],
    secretPlaceholders: ["code"],
    bodyRequires: ["code"],
    required: ["code", "ttl_minutes"],
    defaults: {
      subject: "Your sign-in code",
      body: [
        `Your sign-in code is:`,
        ``,
        `    {{code}}`,
        ``,
        `It expires in {{ttl_minutes}} minutes.`,
        ``,
        `If you did not ask to sign in, you can ignore this email: nobody can sign in without this code.`,
      ].join("\n"),
    },
    sample: { code: "493817", ttl_minutes: 10 },
  },
  seat_invite: {
    description:
      "Sent when a license owner or admin invites someone to a seat; carries the accept link with its token (sealed in the outbox, body only, required in an override's body)",
    placeholders: ["product_name", "role", "invited_by", "expires_at", "accept_url", ...SETTINGS],
    secretPlaceholders: ["accept_url"],
    bodyRequires: ["accept_url"],
    required: ["product_name", "role", "expires_at", "accept_url"],
    defaults: {
      subject: "You are invited to {{product_name}}",
      body: [
        `{{invited_by}} invited you to use {{product_name}} as {{role}}.`,
        ``,
        `Accept the invitation:`,
        `{{accept_url}}`,
        ``,
        `The invitation expires on {{expires_at}}.`,
        ``,
        `If you were not expecting this invitation, you can ignore this email.`,
      ].join("\n"),
    },
    sample: {
      product_name: "Acme Editor",
      role: "member",
      invited_by: "owner@example.com",
      expires_at: "2026-11-28T08:00:00.000Z",
      accept_url: "https://licensing.example.com/portal/accept-invite#token=5e1f5e1f5e1f5e1f5e1f5e1f5e1f5e1f5e1f5e1f5e1f5e1f5e1f5e1f5e1f5e1f",
    },
  },
};

export const EDITABLE_DEFINITIONS: Readonly<Record<EditableTemplate, Definition>> = { ...LIFECYCLE_DEFINITIONS, ...ACCOUNT_DEFINITIONS };

/** The secret placeholders of `template` (filled from the email's sealed values; body only). */
export const secretPlaceholders = (template: EditableTemplate): readonly string[] => EDITABLE_DEFINITIONS[template].secretPlaceholders ?? [];
