// One description of a change's side effects (DECISIONS: Data engines and jobs — "Side effects (audit
// row, events for webhooks, emails) are recorded by one call in the same transaction as the change").
// Services build an `Effects`; repositories hand it to `writeEffects` (write.sqlite.ts) or
// `writeEffectsPg` (write.pg.ts) inside the change's own transaction, so the audit row, the event rows
// and the email rows commit or roll back with the change. The row shapes below are shared by both
// writers.
import type { AuditEntry } from "../audit/repo";
import { newId } from "../../shared/ids";
import type { EventData, EventType } from "./events";
import type { NewOutboxMessage, OutboxMessage } from "./repo";

/** A webhook event: delivered (with the webhooks feature) as the body `{type, timestamp, data}`. */
export type OutboxEvent = { [T in EventType]: { type: T; at: Date; data: EventData[T] } }[EventType];

/**
 * An email to send later: a template name, the recipient and the values the template fills in.
 * `sealed` carries the secret values (a sign-in code, a link with a token) encrypted, never in the
 * clear: build it with `sealedEmail` (modules/email/outbox.ts).
 */
export interface OutboxEmail {
  template: string;
  to: string;
  data: Record<string, unknown>;
  sealed?: string;
  at: Date;
}

export interface Effects {
  audit?: AuditEntry;
  events?: OutboxEvent[];
  emails?: OutboxEmail[];
}

/** Builds one event; `data` is checked against the event catalogue (events.ts). */
export function event<T extends EventType>(type: T, at: Date, data: EventData[T]): OutboxEvent {
  return { type, at, data } as OutboxEvent;
}

/** Standard Webhooks body: `{type, timestamp, data}` (DECISIONS: Webhooks and email). */
export function eventMessage(e: OutboxEvent): NewOutboxMessage {
  return { kind: "event", topic: e.type, payload: { type: e.type, timestamp: e.at.toISOString(), data: e.data }, at: e.at };
}

export function emailMessage(m: OutboxEmail): NewOutboxMessage {
  const payload = { template: m.template, to: m.to, data: m.data, ...(m.sealed === undefined ? {} : { sealed: m.sealed }) };
  return { kind: "email", topic: m.template, payload, at: m.at };
}

/** The outbox messages of `effects`, events first, each in the order given. */
export function outboxMessages(effects: Effects): NewOutboxMessage[] {
  return [...(effects.events ?? []).map(eventMessage), ...(effects.emails ?? []).map(emailMessage)];
}

/** True when `effects` has anything to write (an audit row or an outbox message). */
export function hasEffects(effects: Effects): boolean {
  return Boolean(effects.audit) || (effects.events?.length ?? 0) > 0 || (effects.emails?.length ?? 0) > 0;
}

/** A pending outbox row, due at once. */
export function outboxRow(m: NewOutboxMessage): OutboxMessage {
  return {
    id: newId(),
    kind: m.kind,
    topic: m.topic,
    payload: m.payload,
    status: "pending",
    attempts: 0,
    nextAttemptAt: m.at,
    lastError: null,
    createdAt: m.at,
    sentAt: null,
  };
}

/** An audit_log row (same columns on both engines). */
export function auditRow(entry: AuditEntry) {
  return {
    id: newId(),
    actorType: entry.actor.type,
    actorId: entry.actor.id,
    action: entry.action,
    entityType: entry.entityType,
    entityId: entry.entityId,
    productId: entry.productId,
    changes: entry.changes,
    ip: entry.actor.ip,
    requestId: entry.actor.requestId,
    createdAt: entry.at,
  };
}
