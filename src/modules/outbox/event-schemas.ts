// JSON Schemas of the event catalogue (events.ts), for the OpenAPI document's `webhooks` section and
// for tests that check recorded events against them. A type-level check below keeps every schema
// equal to its TypeScript type in events.ts, so the two cannot drift.
import { Type as t, type Static, type TSchema } from "@sinclair/typebox";
import type { EventData, EventType } from "./events";

const str = () => t.String();
const strOrNull = () => t.Union([t.String(), t.Null()]);
const iso = () => t.String({ format: "date-time" });
const isoOrNull = () => t.Union([t.String({ format: "date-time" }), t.Null()]);

const License = {
  license_id: str(),
  product_id: str(),
  plan_id: str(),
  status: str(),
  valid_until: isoOrNull(),
  support_until: isoOrNull(),
};
const Release = { release_id: str(), product_id: str(), version: str(), channel: str(), status: str(), published_at: isoOrNull() };
const Activation = { activation_id: str(), license_id: str(), product_id: str(), identifier: str(), identifier_type: str() };
const Floating = { session_id: str(), license_id: str(), product_id: str(), identifier: str() };
const Seat = { seat_id: str(), license_id: str(), product_id: str(), role: str() };
const Quota = { license_id: str(), product_id: str(), feature: str(), period: str(), period_key: str(), used: t.Integer(), limit: t.Integer() };

const obj = <P extends Record<string, TSchema>>(properties: P) => t.Object(properties, { additionalProperties: false });

export const EVENT_SCHEMAS = {
  "license.created": obj(License),
  "license.revoked": obj({ ...License, previous_status: str() }),
  "license.suspended": obj({ ...License, previous_status: str() }),
  "license.reinstated": obj({ ...License, previous_status: str() }),
  "license.plan_changed": obj({ ...License, previous_plan_id: str() }),
  "license.updated": obj({ ...License, changed: t.Array(str()) }),
  "license.expired": obj({ ...License, previous_status: str(), reason: t.Union([t.Literal("trial_ended"), t.Literal("grace_ended"), t.Literal("past_due_limit")]) }),
  "license.support_ended": obj(License),
  "license.support_renewed": obj({ ...License, previous_support_until: isoOrNull() }),
  "license.renewed": obj({ ...License, previous_valid_until: isoOrNull(), previous_status: str() }),
  "license.canceled": obj({ ...License, previous_status: str() }),
  "release.published": obj(Release),
  "release.yanked": obj({ ...Release, reason: strOrNull() }),
  "release.unyanked": obj(Release),
  "activation.created": obj(Activation),
  "activation.deleted": obj({ ...Activation, reason: t.Union([t.Literal("deactivated"), t.Literal("removed")]) }),
  "floating.checked_out": obj({ ...Floating, expires_at: iso(), active: t.Integer(), max: t.Union([t.Integer(), t.Null()]) }),
  "floating.checked_in": obj({ ...Floating, active: t.Integer() }),
  "floating.expired": obj({ ...Floating, expired_at: iso() }),
  "seat.invited": obj({ ...Seat, reason: t.Union([t.Literal("invited"), t.Literal("reinvited"), t.Literal("restored")]), invite_expires_at: iso() }),
  "seat.accepted": obj({ ...Seat, user_id: str() }),
  "seat.removed": obj({ ...Seat, previous_state: t.Union([t.Literal("pending"), t.Literal("accepted")]), by: t.Union([t.Literal("portal"), t.Literal("admin")]) }),
  "quota.warning": obj(Quota),
  "quota.exceeded": obj({ ...Quota, requested: t.Integer() }),
  "offline_token.issued": obj({
    license_id: str(),
    product_id: str(),
    plan_id: str(),
    identifier: str(),
    fingerprint: t.String({ pattern: "^[0-9a-f]{16}$" }),
    perpetual: t.Boolean(),
    expires_at: isoOrNull(),
    kid: str(),
    source: t.Union([t.Literal("admin"), t.Literal("portal")]),
    actor_type: str(),
    actor_id: strOrNull(),
  }),
  "offline_activation.cleared": obj({
    offline_activation_id: str(),
    license_id: str(),
    product_id: str(),
    identifier: str(),
    fingerprint: t.String({ pattern: "^[0-9a-f]{16}$" }),
    actor_type: str(),
    actor_id: strOrNull(),
  }),
} satisfies Record<EventType, TSchema>;

// Type-level equality: each schema's static type is exactly the catalogue's data type.
type Equal<A, B> = (<X>() => X extends A ? 1 : 2) extends <X>() => X extends B ? 1 : 2 ? true : false;
type Flat<T> = { [K in keyof T]: T[K] };
type Mismatched = { [K in EventType]: Equal<Flat<Static<(typeof EVENT_SCHEMAS)[K]>>, Flat<EventData[K]>> extends true ? never : K }[EventType];
const _schemasMatchCatalogue: [Mismatched] extends [never] ? true : Mismatched = true;
void _schemasMatchCatalogue;

/** The webhook body of an event type: `{type, timestamp, data}` (Standard Webhooks). */
export function eventBodySchema(type: EventType) {
  return t.Object(
    { type: t.Literal(type), timestamp: t.String({ format: "date-time" }), data: EVENT_SCHEMAS[type] },
    { additionalProperties: false, title: `Event ${type}` },
  );
}
