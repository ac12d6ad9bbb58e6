import { t } from "../../http/schema";

const n = (description: string) => t.Integer({ minimum: 0, description });

export const MeterSyncItemSchema = t.Object(
  {
    id: t.String({ description: "The queue row's id, also the Stripe meter event's `identifier`" }),
    license_id: t.String(),
    feature: t.String(),
    event_name: t.String({ description: "The Stripe meter's event name" }),
    quantity: t.Integer({ description: "The usage report's quantity, sent as the event's `value`" }),
    occurred_at: t.String({ format: "date-time", description: "When the usage was reported (the event's `timestamp`)" }),
    attempts: t.Integer({ minimum: 1, description: "Tries it took, this one included" }),
  },
  { title: "MeterSyncItem" },
);

export const MeterSyncSchema = t.Object(
  {
    claimed: n("Queued usage events taken in this run"),
    sent: n("Events Stripe now has (accepted now, or already there under their identifier)"),
    skipped: n("Events that will not be sent: the license has no Stripe customer, or Stripe refused the event (see docs/payments.md)"),
    retrying: n("Events left pending for a later run, with backoff (Stripe failed or was not reached)"),
    items: t.Array(MeterSyncItemSchema, { description: "The events sent in this run" }),
  },
  { title: "MeterSyncRun" },
);
