// Wire schemas several features share (enums of the license and catalog model). Defined once here so
// the admin and public APIs cannot drift apart, and so feature models can import them without cycles.
import { t } from "elysia";
import { XML_TEXT_PATTERN } from "../shared/xml-text";

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
 * Free text that reaches an update feed (product name, minimum_supported_message, release notes):
 * refuses the characters XML 1.0 forbids, which would make feed.xml unparseable for every Sparkle or
 * WinSparkle client of the product (src/shared/xml-text.ts). Request schemas only: responses must
 * still present rows stored before the check.
 */
export const FeedText = (options: Omit<NonNullable<Parameters<typeof t.String>[0]>, "pattern"> = {}) =>
  t.String({
    ...options,
    pattern: XML_TEXT_PATTERN,
    description: [options.description, "Control characters other than TAB, LF and CR, and U+FFFE/U+FFFF, are refused (XML 1.0)."]
      .filter(Boolean)
      .join(". "),
  });
