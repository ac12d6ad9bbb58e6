// Quota periods (spec: Usage counter — "Counters reset at the quota period boundary in UTC").
// Pure functions of (period, instant): the period key names the UTC window a usage report falls in,
// so rollover needs no job: the first report of a new window simply starts a new counter row.
import type { QuotaPeriod } from "../plans/repo";

const pad = (n: number, width = 2) => String(n).padStart(width, "0");

/** Start of the UTC window containing `at`. */
export function periodStart(period: QuotaPeriod, at: Date): Date {
  const y = at.getUTCFullYear();
  const m = at.getUTCMonth();
  const d = at.getUTCDate();
  switch (period) {
    case "hourly":
      return new Date(Date.UTC(y, m, d, at.getUTCHours()));
    case "daily":
      return new Date(Date.UTC(y, m, d));
    case "monthly":
      return new Date(Date.UTC(y, m, 1));
    case "yearly":
      return new Date(Date.UTC(y, 0, 1));
  }
}

/** First instant of the next window: when the counter resets (`resets_at`). */
export function periodEnd(period: QuotaPeriod, at: Date): Date {
  const s = periodStart(period, at);
  const y = s.getUTCFullYear();
  const m = s.getUTCMonth();
  switch (period) {
    case "hourly":
      return new Date(s.getTime() + 3_600_000);
    case "daily":
      return new Date(Date.UTC(y, m, s.getUTCDate() + 1));
    case "monthly":
      return new Date(Date.UTC(y, m + 1, 1));
    case "yearly":
      return new Date(Date.UTC(y + 1, 0, 1));
  }
}

/** "2026-11-21T08" (hourly), "2026-11-21" (daily), "2026-11" (monthly), "2026" (yearly), all UTC. */
export function periodKey(period: QuotaPeriod, at: Date): string {
  const year = pad(at.getUTCFullYear(), 4);
  const month = `${year}-${pad(at.getUTCMonth() + 1)}`;
  const day = `${month}-${pad(at.getUTCDate())}`;
  switch (period) {
    case "hourly":
      return `${day}T${pad(at.getUTCHours())}`;
    case "daily":
      return day;
    case "monthly":
      return month;
    case "yearly":
      return year;
  }
}

export interface QuotaState {
  used: number;
  /** null = unlimited (counted, never refused). */
  limit: number | null;
}

/** Remaining units, never negative (a lowered limit can leave used above it); null when unlimited. */
export function remaining(q: QuotaState): number | null {
  return q.limit === null ? null : Math.max(0, q.limit - q.used);
}

/** The spec's atomic rule: a report is accepted only if the whole quantity fits under the limit. */
export function fits(q: QuotaState, quantity: number): boolean {
  return q.limit === null || q.used + quantity <= q.limit;
}
