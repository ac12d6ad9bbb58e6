// Emails as outbox effects (see /work/wt/_brief/email-contract.md): the secret values a template
// needs (a sign-in code, an invite link) are sealed with AES-256-GCM before they reach the outbox row.
import { seal } from "../../crypto/aead";
import type { Secrets } from "../keys/secrets";
import type { OutboxEmail } from "../outbox/effects";

export type EmailTemplate = "sign_in_code" | "seat_invite";

/** Additional data binding a sealed payload to its template and recipient. */
export const sealedAad = (template: string, to: string) => `email:${template}:${to}`;

export function sealedEmail(
  secrets: Secrets,
  input: { template: EmailTemplate; to: string; at: Date; data: Record<string, unknown>; secret?: Record<string, string> },
): OutboxEmail {
  const sealed = input.secret
    ? seal(secrets.subkey("outboxSecretEncryption"), JSON.stringify(input.secret), sealedAad(input.template, input.to))
    : undefined;
  return { template: input.template, to: input.to, data: input.data, at: input.at, ...(sealed ? { sealed } : {}) };
}
