// The transactional outbox (DECISIONS: Data engines and jobs; Webhooks and email): side effects are
// written here in the same transaction as the change that causes them, and the deliver-outbox job
// hands them to a handler per kind afterwards (no network I/O inside transactions).

export const OUTBOX_KINDS = ["event", "email"] as const;
export type OutboxKind = (typeof OUTBOX_KINDS)[number];
export type OutboxStatus = "pending" | "sent" | "failed";

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
  /** Marks a claimed message sent; false when the claim was lost (the message was claimed again). */
  markSent(id: string, claim: Date, now: Date): Promise<boolean>;
  /**
   * Counts one failed attempt: due again at `nextAttemptAt`, or status failed when it is null (given
   * up). False when the claim was lost.
   */
  markFailed(id: string, claim: Date, error: string, nextAttemptAt: Date | null): Promise<boolean>;
}
