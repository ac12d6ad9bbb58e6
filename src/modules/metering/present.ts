// Domain → wire for POST /admin/system/run-metered-sync: field by field.
import type { MeterSyncResult } from "./service";

export const presentMeterSync = (r: MeterSyncResult) => ({
  claimed: r.claimed,
  sent: r.sent,
  skipped: r.skipped,
  retrying: r.retrying,
  items: r.items.map((e) => ({
    id: e.id,
    license_id: e.licenseId,
    feature: e.feature,
    event_name: e.eventName,
    quantity: e.quantity,
    occurred_at: e.occurredAt.toISOString(),
    attempts: e.attempts,
  })),
});
