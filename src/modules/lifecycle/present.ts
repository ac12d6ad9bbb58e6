// Domain → wire for POST /admin/system/run-expiry-checks: field by field.
import type { LifecycleCounts } from "./domain";

export const presentLifecycleCounts = (c: LifecycleCounts) => ({
  scanned: c.scanned,
  trials_expired: c.trials_expired,
  grace_expired: c.grace_expired,
  past_due_expired: c.past_due_expired,
  expiry_reminders: c.expiry_reminders,
  support_reminders: c.support_reminders,
  support_ended: c.support_ended,
  dunning_emails: c.dunning_emails,
  batches: c.batches,
});
