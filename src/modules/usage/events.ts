// The quota events (catalogue: outbox/events.ts): quota.warning on the report that crosses 80 % of the
// limit, quota.exceeded on the first refused report of the period.
import { event, type OutboxEvent } from "../outbox/effects";
import type { QuotaPeriod } from "../plans/repo";
import type { ConsumeChange } from "./repo";

/** The share of the limit at which quota.warning fires: 80 % (4/5, compared in integers). */
export const WARNING_NUMERATOR = 4;
export const WARNING_DENOMINATOR = 5;

const atOrAboveWarning = (used: number, limit: number) => used * WARNING_DENOMINATOR >= limit * WARNING_NUMERATOR;

/** True for the accepted report that takes the counter from below 80 % of `limit` to at least 80 %. */
export function crossesWarning(before: number, after: number, limit: number): boolean {
  return !atOrAboveWarning(before, limit) && atOrAboveWarning(after, limit);
}

export interface QuotaContext {
  licenseId: string;
  productId: string;
  feature: string;
  period: QuotaPeriod;
  periodKey: string;
  /** null = unlimited: never warned, never refused. */
  limit: number | null;
  quantity: number;
}

export function quotaEvents(q: QuotaContext, change: ConsumeChange, at: Date): OutboxEvent[] {
  if (q.limit === null) return [];
  const data = { license_id: q.licenseId, product_id: q.productId, feature: q.feature, period: q.period, period_key: q.periodKey, used: change.used, limit: q.limit };
  if (change.accepted) return crossesWarning(change.before, change.used, q.limit) ? [event("quota.warning", at, data)] : [];
  return change.firstRefusal ? [event("quota.exceeded", at, { ...data, requested: q.quantity })] : [];
}
