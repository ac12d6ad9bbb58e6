// Wire schemas several features share (enums of the license and catalog model). Defined once here so
// the admin and public APIs cannot drift apart, and so feature models can import them without cycles.
import { t } from "./schema";
import { XML_TEXT_PATTERN } from "../shared/xml-text";
import { EARLIEST_INSTANT_MS, isStorableInstant, LATEST_INSTANT_MS } from "../shared/clock";
import { validationError } from "../shared/errors";

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

// Elysia's own date-time format also accepts "2026-11-21 10:00", "01/02/2026" and JS Date strings
// (read in the server's time zone), and any text that merely contains an ISO timestamp; the spec says
// RFC 3339, so the pattern below is enforced too (a time zone is required).
const RFC3339 = "^\\d{4}-\\d{2}-\\d{2}[Tt]\\d{2}:\\d{2}:\\d{2}(?:\\.\\d{1,9})?(?:[Zz]|[+-]\\d{2}:\\d{2})$";
/** An instant a client sends (body field or query parameter): RFC 3339 with a time zone. Convert with toInstant. */
export const Instant = t.String({ format: "date-time", pattern: RFC3339, description: "RFC 3339 date-time with a time zone, 0001-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z" });
const DATE_PART = /^(\d{4})-(\d{2})-(\d{2})/;
const OUT_OF_RANGE = `outside ${new Date(EARLIEST_INSTANT_MS).toISOString()} to ${new Date(LATEST_INSTANT_MS).toISOString()}`;

/**
 * Wire instant → Date. The schema has checked the shape; this rejects impossible calendar dates (JS
 * would roll 2026-02-30 over into March) and instants outside the stored range (shared/clock.ts:
 * "0000-01-01T00:00:00Z" or "9999-12-31T23:59:59-14:00", whose UTC year is 10000) with a field error.
 * undefined stays undefined.
 */
export function toInstant(field: string, value: string): Date;
export function toInstant(field: string, value: string | null): Date | null;
export function toInstant(field: string, value: string | undefined): Date | undefined;
export function toInstant(field: string, value: string | null | undefined): Date | null | undefined;
export function toInstant(field: string, value: string | null | undefined): Date | null | undefined {
  if (value === null || value === undefined) return value;
  const m = DATE_PART.exec(value);
  const [y, mo, d] = m ? [Number(m[1]), Number(m[2]), Number(m[3])] : [0, 0, 0];
  // setUTCFullYear, not Date.UTC, which reads years 0-99 as 1900-1999.
  const calendar = new Date(0);
  calendar.setUTCFullYear(y, mo - 1, d);
  const at = new Date(value);
  if (!m || calendar.getUTCMonth() !== mo - 1 || calendar.getUTCDate() !== d || Number.isNaN(at.getTime())) {
    throw validationError({ [field]: "not a valid calendar date-time" });
  }
  if (!isStorableInstant(at.getTime())) throw validationError({ [field]: OUT_OF_RANGE });
  return at;
}
