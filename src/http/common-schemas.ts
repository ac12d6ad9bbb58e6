// Wire schemas several features share (enums of the license and catalog model). Defined once here so
// the admin and public APIs cannot drift apart, and so feature models can import them without cycles.
import { t } from "elysia";

export const LicenseStatusSchema = t.Union([
  t.Literal("active"),
  t.Literal("trialing"),
  t.Literal("past_due"),
  t.Literal("canceled"),
  t.Literal("expired"),
  t.Literal("suspended"),
  t.Literal("revoked"),
]);

export const QuotaPeriodSchema = t.Union([t.Literal("hourly"), t.Literal("daily"), t.Literal("monthly"), t.Literal("yearly")], {
  description: "Quota counters reset at this boundary, in UTC",
});

export const ValueTypeSchema = t.Union([t.Literal("bool"), t.Literal("int"), t.Literal("string"), t.Literal("quota"), t.Literal("flag")], {
  description:
    'bool: "true"/"false"; int: integer string; string: text; flag: on when present (value optional); quota: metered, needs quota_limit',
});

/**
 * Description of a field that is stored and returned but that nothing acts on until a later version
 * adds `feature` (test/arch/stored-fields.test.ts keeps the list honest).
 */
export const storedUntil = (feature: string, effect: string): string => `Stored; takes effect from the version that adds ${feature}: ${effect}`;
