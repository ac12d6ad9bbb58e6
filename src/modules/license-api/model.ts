// Field schemas shared by the public license routes.
import { t } from "../../http/schema";
export { LicenseStatusSchema, QuotaPeriodSchema, ValueTypeSchema } from "../../http/common-schemas";

/**
 * No shape constraint on purpose: a malformed key must get the same 404 LICENSE_NOT_FOUND as a
 * missing one (spec: design rule 4), not a 400 that says "this is not even a key".
 */
export const LicenseKeyField = t.String({
  description: "The license key; the only credential of public license calls",
  examples: ["KW-ABCDEFGH-JKLMNPQR-STUVWXYZ-23456789"],
});

export const ProductIdField = t.Optional(
  t.String({
    format: "uuid",
    description: "Optional: the calling product. A key of another product then answers 404 LICENSE_NOT_FOUND.",
  }),
);

export const identifierField = (maxLength: number) =>
  t.String({
    minLength: 1,
    maxLength,
    description: `Device id or user email, compared exactly (case-sensitive); at most ${maxLength} characters`,
  });

export const LabelField = t.Optional(t.String({ maxLength: 255, description: "Human-readable name, e.g. a host name" }));

export const DateTime = t.String({ format: "date-time" });
export const NullableDateTime = t.Union([DateTime, t.Null()]);
export const Uuid = t.String({ format: "uuid" });
