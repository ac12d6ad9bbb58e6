// Emails in the outbox (the shared contract of the email, sign-in and seats code). A service builds
// one with `sealedEmail` and puts it into `Effects.emails`, in the transaction of its change; the
// email handler (handler.ts) opens it when the deliver-outbox pass hands it over.
//
// Secret values (the sign-in code, the invite link with its token) are sealed with AES-256-GCM under
// their own subkey, with the template and the recipient as additional authenticated data: the row
// never holds them in the clear, and a sealed value copied into another email does not open.
import { openText, seal } from "../../crypto/aead";
import type { Secrets } from "../keys/secrets";
import type { OutboxEmail } from "../outbox/effects";
import { LIFECYCLE_TEMPLATES } from "./editable";

export const EMAIL_TEMPLATES = ["sign_in_code", "seat_invite", "webhook_disabled", ...LIFECYCLE_TEMPLATES] as const;
export type EmailTemplate = (typeof EMAIL_TEMPLATES)[number];

export const isEmailTemplate = (v: unknown): v is EmailTemplate => (EMAIL_TEMPLATES as readonly unknown[]).includes(v);

const aad = (template: string, to: string) => `keyward/v1/outbox-email:${template}:${to}`;

/**
 * An OutboxEmail whose secret values (code, link with token) are sealed with AES-256-GCM under
 * deps.secrets.subkey("outboxSecretEncryption") — never plaintext at rest.
 */
export function sealedEmail(
  secrets: Secrets,
  input: {
    template: EmailTemplate;
    to: string;
    at: Date;
    /** Non-secret template values (stored in the clear, listed by GET /admin/emails). */
    data: Record<string, unknown>;
    /** Secret template values, sealed. */
    secret?: Record<string, string>;
  },
): OutboxEmail {
  const email: OutboxEmail = { template: input.template, to: input.to, data: input.data, at: input.at };
  if (input.secret !== undefined) {
    email.sealed = seal(secrets.subkey("outboxSecretEncryption"), JSON.stringify(input.secret), aad(input.template, input.to));
  }
  return email;
}

/** An email payload as read back from the outbox, secrets opened. */
export interface OpenedEmail {
  template: EmailTemplate;
  to: string;
  data: Record<string, unknown>;
  secret: Record<string, string>;
}

/** The outbox payload `{template, to, data}` of an email, checked; null when it is not one. */
export function emailPayload(payload: unknown): { template: EmailTemplate; to: string; data: Record<string, unknown>; sealed: string | null } | null {
  if (!payload || typeof payload !== "object") return null;
  const p = payload as Record<string, unknown>;
  if (!isEmailTemplate(p.template) || typeof p.to !== "string") return null;
  const data = p.data && typeof p.data === "object" && !Array.isArray(p.data) ? (p.data as Record<string, unknown>) : {};
  return { template: p.template, to: p.to, data, sealed: typeof p.sealed === "string" ? p.sealed : null };
}

/**
 * Opens an outbox email payload. Throws when it is malformed or its sealed values do not open (wrong
 * key, or copied from another email): nothing a retry could fix.
 */
export function openEmail(secrets: Secrets, payload: unknown): OpenedEmail {
  const p = emailPayload(payload);
  if (!p) throw new TypeError("not an email payload of a known template");
  let secret: Record<string, string> = {};
  if (p.sealed !== null) {
    const parsed = JSON.parse(openText(secrets.subkey("outboxSecretEncryption"), p.sealed, aad(p.template, p.to))) as unknown;
    if (!parsed || typeof parsed !== "object") throw new TypeError("sealed email values are not an object");
    secret = Object.fromEntries(Object.entries(parsed as Record<string, unknown>).filter((e): e is [string, string] => typeof e[1] === "string"));
  }
  return { template: p.template, to: p.to, data: p.data, secret };
}
