// The activation events (catalogue: outbox/events.ts).
import { event, type OutboxEvent } from "../outbox/effects";
import type { ActivationEventData } from "../outbox/events";
import type { Activation } from "./repo";

function activationData(a: Activation, productId: string): ActivationEventData {
  return { activation_id: a.id, license_id: a.licenseId, product_id: productId, identifier: a.identifier, identifier_type: a.identifierType };
}

export function activationCreated(a: Activation, productId: string, at: Date): OutboxEvent {
  return event("activation.created", at, activationData(a, productId));
}

export function activationDeleted(a: Activation, productId: string, reason: "deactivated" | "removed", at: Date): OutboxEvent {
  return event("activation.deleted", at, { ...activationData(a, productId), reason });
}
