// The known system settings: a closed, typed set (unknown keys are refused at the route). Key names
// are both the stored identifiers (settings.key) and the wire names, so they stay snake_case here.
// A key that was never set, or was reset with null, reads as its default.
import { validationError } from "../../shared/errors";

export interface Settings {
  /** Shown in emails and the portal, e.g. "Acme Software". */
  vendor_name: string | null;
  /** Where customers are told to write for help. */
  support_email: string | null;
  /** From header of outgoing emails: "addr@example.com" or "Name <addr@example.com>". */
  email_from: string | null;
  /** Customer portal address used in email links (http or https). */
  portal_url: string | null;
  /** Master switch for the lifecycle pass's reminder emails. */
  reminders_enabled: boolean;
  /** Days before valid_until at which an expiry reminder is sent (DECISIONS: 7/3/1). */
  expiry_reminder_days: number[];
  /** Days before support_until at which a support-renewal reminder is sent (DECISIONS: 30/7). */
  support_reminder_days: number[];
}

export type SettingKey = keyof Settings;
export type SettingsPatch = { [K in SettingKey]?: Settings[K] | null };

export const SETTING_DEFAULTS: Readonly<Settings> = Object.freeze({
  vendor_name: null,
  support_email: null,
  email_from: null,
  portal_url: null,
  reminders_enabled: true,
  expiry_reminder_days: [7, 3, 1],
  support_reminder_days: [30, 7],
});

export const SETTING_KEYS = Object.keys(SETTING_DEFAULTS) as SettingKey[];

const isDayList = (v: unknown): v is number[] => Array.isArray(v) && v.every((d) => Number.isInteger(d) && d >= 1 && d <= 365);
const GUARDS: Record<SettingKey, (v: unknown) => boolean> = {
  vendor_name: (v) => typeof v === "string",
  support_email: (v) => typeof v === "string",
  email_from: (v) => typeof v === "string",
  portal_url: (v) => typeof v === "string",
  reminders_enabled: (v) => typeof v === "boolean",
  expiry_reminder_days: isDayList,
  support_reminder_days: isDayList,
};

/** Stored rows → full settings; anything unknown or mistyped falls back to the default. */
export function resolveSettings(stored: Readonly<Record<string, unknown>>): Settings {
  const out: Record<string, unknown> = { ...SETTING_DEFAULTS };
  for (const key of SETTING_KEYS) {
    if (key in stored && GUARDS[key](stored[key])) out[key] = stored[key];
  }
  return out as unknown as Settings;
}

// Display name (optionally quoted) followed by <addr>, or a bare address. Line breaks are refused so
// the value can never inject extra mail headers.
const ADDRESS = "[^\\s<>@\"]+@[^\\s<>@\"]+\\.[^\\s<>@\"]+";
const EMAIL_FROM = new RegExp(`^(?:${ADDRESS}|[^\\r\\n<>]{1,200} <${ADDRESS}>)$`);

/**
 * Checks what the schema cannot express and returns the patch to store: null = reset to default,
 * day lists de-duplicated and sorted longest lead first.
 */
export function normalizeSettingsPatch(patch: SettingsPatch): SettingsPatch {
  const errors: Record<string, string> = {};
  const out: SettingsPatch = { ...patch };
  if (typeof patch.email_from === "string" && !EMAIL_FROM.test(patch.email_from)) {
    errors.email_from = 'must be "addr@example.com" or "Name <addr@example.com>"';
  }
  if (typeof patch.portal_url === "string") {
    let protocol = "";
    try {
      protocol = new URL(patch.portal_url).protocol;
    } catch {
      protocol = "";
    }
    if (protocol !== "http:" && protocol !== "https:") errors.portal_url = "must be an absolute http(s) URL";
    else out.portal_url = patch.portal_url.replace(/\/+$/, "");
  }
  for (const key of ["expiry_reminder_days", "support_reminder_days"] as const) {
    const days = patch[key];
    if (Array.isArray(days)) out[key] = [...new Set(days)].sort((a, b) => b - a);
  }
  if (Object.keys(errors).length) throw validationError(errors);
  return out;
}
