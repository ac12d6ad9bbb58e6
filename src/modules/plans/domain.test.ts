import { describe, expect, test } from "bun:test";
import { AppError } from "../../shared/errors";
import { isFeatureName, normalizeFeature, type FeatureSpec } from "./domain";

function fieldsOf(spec: FeatureSpec): string[] {
  try {
    normalizeFeature(spec, "f.");
  } catch (e) {
    expect(e).toBeInstanceOf(AppError);
    return Object.keys(((e as AppError).details as { fields: Record<string, string> }).fields);
  }
  return [];
}

describe("feature values", () => {
  test("valid definitions normalize to their stored form", () => {
    expect(normalizeFeature({ valueType: "bool", value: "false" })).toEqual({ valueType: "bool", value: "false", quotaLimit: null, quotaPeriod: null });
    expect(normalizeFeature({ valueType: "int", value: "-12" }).value).toBe("-12");
    expect(normalizeFeature({ valueType: "string", value: "" }).value).toBe("");
    expect(normalizeFeature({ valueType: "flag" }).value).toBe("true");
    expect(normalizeFeature({ valueType: "quota", quotaLimit: 0 })).toEqual({ valueType: "quota", value: "0", quotaLimit: 0, quotaPeriod: null });
    expect(normalizeFeature({ valueType: "quota", quotaLimit: 5, value: "5", quotaPeriod: "daily" }).quotaPeriod).toBe("daily");
  });

  test("each type refuses what it cannot hold, naming the field", () => {
    expect(fieldsOf({ valueType: "bool", value: "yes" })).toEqual(["f.value"]);
    expect(fieldsOf({ valueType: "bool" })).toEqual(["f.value"]);
    expect(fieldsOf({ valueType: "int", value: "1.5" })).toEqual(["f.value"]);
    expect(fieldsOf({ valueType: "int", value: "007" })).toEqual(["f.value"]);
    expect(fieldsOf({ valueType: "int", value: "99999999999999999999" })).toEqual(["f.value"]);
    expect(fieldsOf({ valueType: "string" })).toEqual(["f.value"]);
    expect(fieldsOf({ valueType: "quota" })).toEqual(["f.quota_limit"]);
    expect(fieldsOf({ valueType: "quota", quotaLimit: -1 })).toEqual(["f.quota_limit"]);
    expect(fieldsOf({ valueType: "quota", quotaLimit: 5, value: "6" })).toEqual(["f.value"]);
    expect(fieldsOf({ valueType: "bool", value: "true", quotaLimit: 5, quotaPeriod: "daily" }).sort()).toEqual(["f.quota_limit", "f.quota_period"]);
  });

  test("feature names", () => {
    for (const ok of ["sync", "export.pdf", "a:b-c_d", "x".repeat(64)]) expect(isFeatureName(ok)).toBe(true);
    for (const bad of ["", "Sync", "has space", "x".repeat(65), "é"]) expect(isFeatureName(bad)).toBe(false);
  });
});
