// Admin verbs over the email outbox. System-wide: a product-bound key is refused.
import type { Deps } from "../../deps";
import { assertSystemWide, type Actor } from "../../shared/actor";
import type { EmailFilter, OutboxMessage, OutboxStatus } from "../outbox/repo";
import { emailPayload } from "./outbox";
import { DEFAULT_RENDER_CONTEXT, emailSubject, type EmailRenderContext } from "./templates";
import { loadEmailRenderContext } from "./context";

/** One email of the outbox as the admin list shows it: never its sealed values. */
export interface EmailRecord {
  id: string;
  template: string;
  to: string | null;
  /** Rendered from the non-secret values; null for a message of an unknown template. */
  subject: string | null;
  status: OutboxStatus;
  attempts: number;
  lastError: string | null;
  createdAt: Date;
  sentAt: Date | null;
}

export function emailRecord(m: OutboxMessage, ctx: EmailRenderContext = DEFAULT_RENDER_CONTEXT): EmailRecord {
  const p = emailPayload(m.payload);
  const rawTo = m.payload && typeof m.payload === "object" ? (m.payload as Record<string, unknown>).to : null;
  return {
    id: m.id,
    template: m.topic,
    to: typeof rawTo === "string" ? rawTo : null,
    subject: p ? emailSubject(p.template, p.data, ctx) : null,
    status: m.status,
    attempts: m.attempts,
    lastError: m.lastError,
    createdAt: m.createdAt,
    sentAt: m.sentAt,
  };
}

export async function listEmails(deps: Deps, actor: Actor, filter: EmailFilter): Promise<{ items: EmailRecord[]; nextCursor: string | null }> {
  assertSystemWide(actor);
  const [page, ctx] = await Promise.all([deps.repos.outbox.listEmails(filter), loadEmailRenderContext(deps.repos)]);
  return { items: page.items.map((m) => emailRecord(m, ctx)), nextCursor: page.nextCursor };
}
