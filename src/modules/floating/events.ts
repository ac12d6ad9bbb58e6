// The floating-session events (catalogue: outbox/events.ts).
import { event, type OutboxEvent } from "../outbox/effects";
import type { FloatingEventData } from "../outbox/events";
import type { FloatingSession } from "./repo";

function sessionData(s: FloatingSession, productId: string): FloatingEventData {
  return { session_id: s.id, license_id: s.licenseId, product_id: productId, identifier: s.identifier };
}

export function floatingCheckedOut(s: FloatingSession, productId: string, active: number, max: number | null, at: Date): OutboxEvent {
  return event("floating.checked_out", at, { ...sessionData(s, productId), expires_at: s.expiresAt.toISOString(), active, max });
}

export function floatingCheckedIn(s: FloatingSession, productId: string, active: number, at: Date): OutboxEvent {
  return event("floating.checked_in", at, { ...sessionData(s, productId), active });
}

/** `expired_at` is the session's expiry (it lapsed then); the event is recorded when it is deleted. */
export function floatingExpired(s: FloatingSession, productId: string, at: Date): OutboxEvent {
  return event("floating.expired", at, { ...sessionData(s, productId), expired_at: s.expiresAt.toISOString() });
}
