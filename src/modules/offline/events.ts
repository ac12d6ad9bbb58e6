// The offline token events (catalogue: outbox/events.ts).
import { event, type OutboxEvent } from "../outbox/effects";
import type { Actor } from "../../shared/actor";
import type { LicenseAccess } from "../license-api/repo";
import type { OfflineActivation } from "./repo";

export interface IssuedToken {
  identifier: string;
  fingerprint: string;
  /** Unix seconds, 0 = perpetual. */
  exp: number;
  kid: string;
}

export function offlineTokenIssued(access: LicenseAccess, token: IssuedToken, actor: Actor, source: "admin" | "portal", at: Date): OutboxEvent {
  return event("offline_token.issued", at, {
    license_id: access.license.id,
    product_id: access.license.productId,
    plan_id: access.plan.id,
    identifier: token.identifier,
    fingerprint: token.fingerprint,
    perpetual: token.exp === 0,
    expires_at: token.exp === 0 ? null : new Date(token.exp * 1000).toISOString(),
    kid: token.kid,
    source,
    actor_type: actor.type,
    actor_id: actor.id,
  });
}

export function offlineActivationCleared(a: OfflineActivation, productId: string, actor: Actor, at: Date): OutboxEvent {
  return event("offline_activation.cleared", at, {
    offline_activation_id: a.id,
    license_id: a.licenseId,
    product_id: productId,
    identifier: a.identifier,
    fingerprint: a.fingerprint,
    actor_type: actor.type,
    actor_id: actor.id,
  });
}
