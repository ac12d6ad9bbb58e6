import type { UsageView } from "./service";

const counter = (v: UsageView) => ({ used: v.used, limit: v.limit, remaining: v.remaining, period: v.period, period_key: v.periodKey });

// Refused reports are 429 QUOTA_EXCEEDED, so a 200 always carries accepted: true.
export const presentUsage = (v: UsageView) => ({ accepted: true, ...counter(v) });
export const presentUsageStatus = (v: UsageView) => ({ feature: v.name, ...counter(v) });
export const presentCounter = (v: UsageView) => ({ feature: v.name, ...counter(v), resets_at: v.resetsAt.toISOString() });
