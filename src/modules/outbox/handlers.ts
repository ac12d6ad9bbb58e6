// Delivery handlers, one per outbox kind, registered in Deps (webhooks and email register theirs in
// later versions). Kept apart from service.ts so deps.ts can name the type without a cycle.
import type { OutboxKind, OutboxMessage } from "./repo";

/** Delivers one message; resolves when it was accepted, rejects (any error) to retry later. */
export type OutboxHandler = (message: OutboxMessage) => Promise<void>;
export type OutboxHandlers = Partial<Record<OutboxKind, OutboxHandler>>;
