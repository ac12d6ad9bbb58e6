// Pure feature rules shared by plan features and add-ons: what a valid (value_type, value,
// quota_limit, quota_period) combination is. Values travel as strings (spec: entitlements `value`).
import { validationError } from "../../shared/errors";
import type { FeatureValueType, QuotaPeriod } from "./repo";

export const FEATURE_NAME_PATTERN = "^[a-z0-9_.:-]{1,64}$";
const FEATURE_NAME = new RegExp(FEATURE_NAME_PATTERN);
const INTEGER = /^-?(0|[1-9]\d*)$/;
export const MAX_FEATURE_VALUE_LENGTH = 1024;

export interface FeatureSpec {
  valueType: FeatureValueType;
  value?: string | undefined;
  quotaLimit?: number | null | undefined;
  quotaPeriod?: QuotaPeriod | null | undefined;
}

export interface FeatureValue {
  valueType: FeatureValueType;
  value: string;
  quotaLimit: number | null;
  quotaPeriod: QuotaPeriod | null;
}

export function isFeatureName(name: string): boolean {
  return FEATURE_NAME.test(name);
}

/**
 * Validates a feature definition and returns its stored form. `field` prefixes the error keys
 * (e.g. "features.2.") so the caller sees which item is wrong.
 *   bool   value "true" | "false" (required)
 *   int    value an integer in decimal (required)
 *   string value any text up to 1024 characters (required)
 *   flag   on whenever present; value optional (defaults to "true"), e.g. a variant label
 *   quota  quota_limit integer ≥ 0 (required); quota_period optional, overrides the plan's;
 *          value is the limit in decimal (optional; if given it must equal quota_limit)
 * quota_limit and quota_period belong to quota features only.
 */
export function normalizeFeature(spec: FeatureSpec, field = ""): FeatureValue {
  const errors: Record<string, string> = {};
  const { valueType, value } = spec;
  const quotaLimit = spec.quotaLimit ?? null;
  const quotaPeriod = spec.quotaPeriod ?? null;
  let stored = value ?? "";

  if (valueType === "quota") {
    if (quotaLimit === null) errors[`${field}quota_limit`] = "required for quota features (integer ≥ 0)";
    else if (!Number.isSafeInteger(quotaLimit) || quotaLimit < 0) errors[`${field}quota_limit`] = "must be an integer ≥ 0";
    else if (value !== undefined && value !== String(quotaLimit)) errors[`${field}value`] = "must be omitted or equal quota_limit";
    else stored = String(quotaLimit);
  } else {
    if (spec.quotaLimit !== undefined && spec.quotaLimit !== null) errors[`${field}quota_limit`] = "only quota features have a limit";
    if (spec.quotaPeriod !== undefined && spec.quotaPeriod !== null) errors[`${field}quota_period`] = "only quota features have a period";
    if (valueType === "flag") {
      stored = value ?? "true";
    } else if (value === undefined) {
      errors[`${field}value`] = `required for ${valueType} features`;
    } else if (valueType === "bool" && value !== "true" && value !== "false") {
      errors[`${field}value`] = 'must be "true" or "false"';
    } else if (valueType === "int" && (!INTEGER.test(value) || !Number.isSafeInteger(Number(value)))) {
      errors[`${field}value`] = "must be an integer string";
    }
  }
  if (stored.length > MAX_FEATURE_VALUE_LENGTH) errors[`${field}value`] = `at most ${MAX_FEATURE_VALUE_LENGTH} characters`;
  if (Object.keys(errors).length) throw validationError(errors);
  return { valueType, value: stored, quotaLimit: valueType === "quota" ? quotaLimit : null, quotaPeriod: valueType === "quota" ? quotaPeriod : null };
}
