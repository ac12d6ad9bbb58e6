// The transactional outbox (DECISIONS: Data engines and jobs; Webhooks and email): side effects are
// written here in the same transaction as the change that causes them, and the deliver-outbox job
// hands them to a handler per kind afterwards (no network I/O inside transactions).
import type { Effects } from "./effects";

export const OUTBOX_KINDS = ["event", "email"] as const;
export type OutboxKind = (typeof OUTBOX_KINDS)[number];
/**
 * pending: due now or later; sent: handed over (the SMTP server accepted it; an event was fanned out
 * into webhook deliveries, which keep their own status); failed:
 * given up; logged: an email written to the log instead of being sent (no SMTP_URL: development).
 */
export const OUTBOX_STATUSES = ["pending", "sent", "failed", "logged"] as const;
export type OutboxStatus = (typeof OUTBOX_STATUSES)[number];
/** How a delivered message ends: handed over, or (an email with no SMTP configured) only logged. */
export type DeliveredStatus = Extract<OutboxStatus, "sent" | "logged">;

export interface OutboxMessage {
  id: string;
  kind: OutboxKind;
  /** Event type ("license.revoked") or email template name. */
  topic: string;
  payload: unknown;
  status: OutboxStatus;
  /** Failed delivery attempts so far. */
  attempts: number;
  /** When the message is due; while a node delivers it, the end of that node's claim. */
  nextAttemptAt: Date;
  lastError: string | null;
  createdAt: Date;
  sentAt: Date | null;
}

export interface NewOutboxMessage {
  kind: OutboxKind;
  topic: string;
  payload: unknown;
  /** Creation time; the message is due at once. */
  at: Date;
}

export interface OutboxRepo {
  /**
   * Writes a change's side effects (the audit row, event and email messages: effects.ts). In a unit
   * of work (DataStore.transaction) they commit or roll back with the change; called outside one,
   * they are written together in a transaction of their own.
   */
  writeEffects(effects: Effects): Promise<void>;
  /** Adds one pending message due at `at`, on its own. A change records its side effects with writeEffects / writeEffectsPg (write.sqlite.ts / write.pg.ts) inside its own transaction instead. */
  enqueue(message: NewOutboxMessage): Promise<OutboxMessage>;
  get(id: string): Promise<OutboxMessage | null>;
  /**
   * Atomically claims up to `limit` pending messages of `kinds` that are due at `now`, oldest due
   * first, by moving their next_attempt_at to `leaseUntil`: until then no other node (nor this one)
   * claims them again. A node that dies mid-delivery leaves them due again at `leaseUntil`
   * (at-least-once). Kinds not listed are left untouched. Returns the claimed messages, whose
   * `nextAttemptAt` (= leaseUntil) is the claim token for markSent / markFailed.
   */
  claimDue(input: { now: Date; limit: number; leaseUntil: Date; kinds: readonly OutboxKind[] }): Promise<OutboxMessage[]>;
  /**
   * The delivery worker's wake-up poll (jobs/delivery-worker.ts), one statement through the indexes:
   * when the earliest pending outbox message is due, and when the earliest pending webhook delivery
   * of an enabled endpoint is due (null: there is none). A time in the past means due now.
   */
  nextDue(): Promise<{ outbox: Date | null; webhooks: Date | null }>;
  /**
   * Calls `wake` soon after a change that wrote outbox messages or webhook deliveries commits: on
   * SQLite for writes of this process (bell.ts), on PostgreSQL for every node's writes (LISTEN on the
   * channel write.pg.ts NOTIFYs). A hint only: the worker polls nextDue as well. Resolves with the
   * function that stops it.
   */
  onDeliveryWork(wake: () => void): Promise<() => Promise<void>>;
  /**
   * The other end of onDeliveryWork, for writers of webhook deliveries (webhooks/handler.ts,
   * service.ts): wakes the delivery workers when the unit of work commits (at once outside one), on
   * SQLite this process's (bell.ts), on PostgreSQL every node's (NOTIFY, never sent for a rollback).
   * writeEffects does this itself when it writes outbox messages.
   */
  wakeDeliveryWork(): Promise<void>;
  /**
   * Marks a claimed message delivered: status `sent` (default) or `logged`, sent_at = now; false when
   * the claim was lost (the message was claimed again).
   */
  markSent(id: string, claim: Date, now: Date, status?: DeliveredStatus): Promise<boolean>;
  /**
   * markSent for several claimed messages in one transaction (a delivery batch's: one commit, not
   * one per message). Returns the ids marked; a message whose claim was lost is left out.
   */
  markSentMany(items: readonly { id: string; claim: Date; status: DeliveredStatus }[], now: Date): Promise<Set<string>>;
  /**
   * Counts one failed attempt: due again at `nextAttemptAt`, or status failed when it is null (given
   * up). False when the claim was lost.
   */
  markFailed(id: string, claim: Date, error: string, nextAttemptAt: Date | null): Promise<boolean>;
  /**
   * Email messages (kind email), newest first (created_at, then id), keyset-paginated like the other
   * admin lists. `template` matches the topic; `to` the payload's recipient, exactly but
   * case-insensitively (ASCII).
   */
  listEmails(filter: EmailFilter): Promise<{ items: OutboxMessage[]; nextCursor: string | null }>;
  /**
   * Event messages (kind event), newest first (created_at, then id), keyset-paginated. `type` matches
   * the topic exactly, `typePrefix` its beginning ("license."); `since` inclusive, `until` exclusive
   * on created_at; `productId` the payload's data.product_id.
   */
  listEvents(filter: EventFilter): Promise<{ items: OutboxMessage[]; nextCursor: string | null }>;
  /**
   * One batch of the prune-history pass: deletes up to `limit` finished messages (FINISHED_OUTBOX_STATUSES)
   * whose next_attempt_at is before `before`, by primary key, in one short statement; returns how many
   * went. For a finished message next_attempt_at is the end of its last claim, so it says when the
   * message finished (a few minutes late at most). Pending messages are never deleted.
   */
  pruneFinished(before: Date, limit: number): Promise<number>;
}

/** Statuses a message never leaves (the ones prune-history may delete). */
export const FINISHED_OUTBOX_STATUSES = ["sent", "failed", "logged"] as const satisfies readonly OutboxStatus[];

export interface EventFilter {
  type?: string;
  typePrefix?: string;
  since?: Date;
  until?: Date;
  productId?: string;
  cursor?: string;
  limit: number;
}

export interface EmailFilter {
  status?: OutboxStatus;
  template?: string;
  to?: string;
  cursor?: string;
  limit: number;
}
