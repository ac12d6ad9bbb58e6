// The event catalogue: every event type Keyward records and the fields of its `data`. Payloads are
// small and hold no secrets: ids, identifiers, counts, statuses and ISO 8601 dates, never a license
// key or an email address. docs/events.md documents the same list for integrators.

/** The license as events show it. */
export interface LicenseEventData {
  license_id: string;
  product_id: string;
  plan_id: string;
  status: string;
  valid_until: string | null;
  support_until: string | null;
}

export interface ReleaseEventData {
  release_id: string;
  product_id: string;
  version: string;
  channel: string;
  status: string;
  published_at: string | null;
}

export interface ActivationEventData {
  activation_id: string;
  license_id: string;
  product_id: string;
  identifier: string;
  identifier_type: string;
}

export interface FloatingEventData {
  session_id: string;
  license_id: string;
  product_id: string;
  identifier: string;
}

export interface SeatEventData {
  seat_id: string;
  license_id: string;
  product_id: string;
  role: string;
}

export interface QuotaEventData {
  license_id: string;
  product_id: string;
  feature: string;
  period: string;
  period_key: string;
  used: number;
  limit: number;
}

/** An offline token was issued (spec: Offline token issue); the token itself is never in the event. */
export interface OfflineTokenEventData {
  license_id: string;
  product_id: string;
  plan_id: string;
  identifier: string;
  /** 16 hex, the token's `fpr`. */
  fingerprint: string;
  perpetual: boolean;
  /** ISO 8601, null when perpetual. */
  expires_at: string | null;
  /** The signing key's id (the token's `kid`). */
  kid: string;
  /** "admin": POST /admin/licenses/{id}/offline-token; "portal": a customer's self-service offline activation. */
  source: "admin" | "portal";
  /** Who issued it: the actor's type (`api_key`, `session`, `system`) and id. */
  actor_type: string;
  actor_id: string | null;
}

/** An admin cleared a self-service offline activation (the license may get a new one). */
export interface OfflineActivationEventData {
  offline_activation_id: string;
  license_id: string;
  product_id: string;
  identifier: string;
  fingerprint: string;
  actor_type: string;
  actor_id: string | null;
}

export interface EventData {
  "license.created": LicenseEventData;
  "license.revoked": LicenseEventData & { previous_status: string };
  "license.suspended": LicenseEventData & { previous_status: string };
  "license.reinstated": LicenseEventData & { previous_status: string };
  "license.plan_changed": LicenseEventData & { previous_plan_id: string };
  /** Expiry or support window edited; `changed` names the fields. */
  "license.updated": LicenseEventData & { changed: string[] };
  /** The lifecycle pass expired the license. */
  "license.expired": LicenseEventData & { previous_status: string; reason: "trial_ended" | "grace_ended" | "past_due_limit" };
  /** support_until passed on a usable license (once per support_until value). */
  "license.support_ended": LicenseEventData;
  /** A paid support renewal (Stripe checkout) advanced support_until. */
  "license.support_renewed": LicenseEventData & { previous_support_until: string | null };
  /** A subscription payment (or another paid renewal) extended valid_until. */
  "license.renewed": LicenseEventData & { previous_valid_until: string | null; previous_status: string };
  /** The license's subscription ended (status canceled). */
  "license.canceled": LicenseEventData & { previous_status: string };
  "release.published": ReleaseEventData;
  "release.yanked": ReleaseEventData & { reason: string | null };
  "release.unyanked": ReleaseEventData;
  "activation.created": ActivationEventData;
  /** `reason`: "deactivated" (the client's deactivate) or "removed" (an admin removed it). */
  "activation.deleted": ActivationEventData & { reason: "deactivated" | "removed" };
  /** A new session (not a refresh of a live one); `active` counts live sessions including it. */
  "floating.checked_out": FloatingEventData & { expires_at: string; active: number; max: number | null };
  "floating.checked_in": FloatingEventData & { active: number };
  "floating.expired": FloatingEventData & { expired_at: string };
  /** An invite was sent: a new seat, a pending one re-invited (token rotated) or a removed one restored. */
  "seat.invited": SeatEventData & { reason: "invited" | "reinvited" | "restored"; invite_expires_at: string };
  "seat.accepted": SeatEventData & { user_id: string };
  /** `by`: "portal" (the owner or a seat admin) or "admin" (the admin API). */
  "seat.removed": SeatEventData & { previous_state: "pending" | "accepted"; by: "portal" | "admin" };
  /** The report that took `used` from below 80 % of `limit` to at least 80 %. */
  "quota.warning": QuotaEventData;
  /** The first refused report of the period; `used` is the unchanged counter. */
  "quota.exceeded": QuotaEventData & { requested: number };
  "offline_token.issued": OfflineTokenEventData;
  "offline_activation.cleared": OfflineActivationEventData;
}

export type EventType = keyof EventData;

export const EVENT_TYPES = [
  "license.created",
  "license.revoked",
  "license.suspended",
  "license.reinstated",
  "license.plan_changed",
  "license.updated",
  "license.expired",
  "license.support_ended",
  "license.support_renewed",
  "license.renewed",
  "license.canceled",
  "release.published",
  "release.yanked",
  "release.unyanked",
  "activation.created",
  "activation.deleted",
  "floating.checked_out",
  "floating.checked_in",
  "floating.expired",
  "seat.invited",
  "seat.accepted",
  "seat.removed",
  "quota.warning",
  "quota.exceeded",
  "offline_token.issued",
  "offline_activation.cleared",
] as const satisfies readonly EventType[];

/** ISO 8601 or null. */
export const isoOrNull = (d: Date | null): string | null => (d ? d.toISOString() : null);
