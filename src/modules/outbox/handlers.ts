// Delivery handlers, one per outbox kind, registered in Deps (email: modules/email/handler.ts; event:
// the webhook fan-out, modules/webhooks/handler.ts). Kept apart from service.ts so deps.ts can name the type without a cycle.
import type { DeliveredStatus, OutboxKind, OutboxMessage } from "./repo";

/**
 * Delivers one message. Resolves when it was delivered: with nothing (status sent) or with the status
 * to record ("logged": an email written to the log, no SMTP configured). Rejects to retry later with
 * backoff; rejects with a PermanentDeliveryError to give up at once (status failed).
 */
export type OutboxHandler = (message: OutboxMessage) => Promise<DeliveredStatus | void>;
export type OutboxHandlers = Partial<Record<OutboxKind, OutboxHandler>>;

/**
 * A failure no retry can fix (an SMTP 5xx answer, a message that cannot be rendered): the delivery
 * loop marks the message failed at once instead of retrying it for days.
 */
export class PermanentDeliveryError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "PermanentDeliveryError";
  }
}
