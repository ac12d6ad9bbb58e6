// The license events (catalogue: outbox/events.ts), built from the license as the change leaves it.
// No key material and no email address: ids, status and dates only.
import { event, type OutboxEvent } from "../outbox/effects";
import { isoOrNull, type LicenseEventData } from "../outbox/events";
import type { License, LicensePatch } from "./repo";
import type { LicenseAction } from "./domain";

function licenseData(l: License): LicenseEventData {
  return {
    license_id: l.id,
    product_id: l.productId,
    plan_id: l.planId,
    status: l.status,
    valid_until: isoOrNull(l.validUntil),
    support_until: isoOrNull(l.supportUntil),
  };
}

export function licenseCreated(license: License, at: Date): OutboxEvent {
  return event("license.created", at, licenseData(license));
}

const ACTION_EVENTS = { revoke: "license.revoked", suspend: "license.suspended", reinstate: "license.reinstated" } as const;

export function licenseTransitioned(action: LicenseAction, before: License, patch: LicensePatch, at: Date): OutboxEvent {
  return event(ACTION_EVENTS[action], at, { ...licenseData({ ...before, ...patch }), previous_status: before.status });
}

export function licensePlanChanged(before: License, patch: LicensePatch, at: Date): OutboxEvent {
  return event("license.plan_changed", at, { ...licenseData({ ...before, ...patch }), previous_plan_id: before.planId });
}

/** The lifecycle pass expired `after` (the row as the write left it); `before` is what it was. */
export function licenseExpired(before: License, after: License, reason: "trial_ended" | "grace_ended" | "past_due_limit", at: Date): OutboxEvent {
  return event("license.expired", at, { ...licenseData(after), previous_status: before.status, reason });
}

export function licenseSupportEnded(license: License, at: Date): OutboxEvent {
  return event("license.support_ended", at, licenseData(license));
}

/** A paid support renewal moved support_until from `before` to `after`. */
export function licenseSupportRenewed(before: License, after: License, at: Date): OutboxEvent {
  return event("license.support_renewed", at, { ...licenseData(after), previous_support_until: isoOrNull(before.supportUntil) });
}

/** A paid renewal (a subscription invoice) extended valid_until; `before` is the license as it was. */
export function licenseRenewed(before: License, after: License, at: Date): OutboxEvent {
  return event("license.renewed", at, { ...licenseData(after), previous_valid_until: isoOrNull(before.validUntil), previous_status: before.status });
}

/** The license's subscription ended: `after` has status canceled. */
export function licenseCanceled(before: License, after: License, at: Date): OutboxEvent {
  return event("license.canceled", at, { ...licenseData(after), previous_status: before.status });
}

const EDITABLE = { validUntil: "valid_until", supportUntil: "support_until" } as const;
const sameInstant = (a: Date | null, b: Date | null) => (a === null || b === null ? a === b : a.getTime() === b.getTime());

/** license.updated for an expiry or support-window edit; none when the value did not change. */
export function licenseUpdated(before: License, patch: LicensePatch, at: Date): OutboxEvent[] {
  const changed = (Object.keys(EDITABLE) as (keyof typeof EDITABLE)[])
    .filter((k) => k in patch && !sameInstant(before[k], patch[k] ?? null))
    .map((k) => EDITABLE[k]);
  return changed.length === 0 ? [] : [event("license.updated", at, { ...licenseData({ ...before, ...patch }), changed })];
}
