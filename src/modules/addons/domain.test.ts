import { describe, expect, test } from "bun:test";
import { addonPatch, mergeFeatures } from "./domain";

const pf = (name: string, valueType: any, value: string, quotaLimit: number | null = null, quotaPeriod: any = null) => ({
  name,
  valueType,
  value,
  quotaLimit,
  quotaPeriod,
});
const ad = (id: string, featureName: string, valueType: any, value: string, quotaLimit: number | null = null, quotaPeriod: any = null) => ({
  id,
  featureName,
  valueType,
  value,
  quotaLimit,
  quotaPeriod,
});

describe("add-on merge rule", () => {
  test("plan features alone; quota period falls back to the plan's", () => {
    const out = mergeFeatures("monthly", [pf("sync", "quota", "100", 100), pf("pdf", "bool", "false")], []);
    expect(out).toEqual([
      { name: "pdf", valueType: "bool", value: "false", quotaLimit: null, quotaPeriod: null, sources: ["plan"] },
      { name: "sync", valueType: "quota", value: "100", quotaLimit: 100, quotaPeriod: "monthly", sources: ["plan"] },
    ]);
  });

  test("an add-on overrides a plan feature of the same name", () => {
    const out = mergeFeatures("monthly", [pf("pdf", "bool", "false")], [ad("a1", "pdf", "bool", "true")]);
    expect(out).toEqual([{ name: "pdf", valueType: "bool", value: "true", quotaLimit: null, quotaPeriod: null, sources: ["a1"] }]);
  });

  test("quota limits add up and the plan's period stays", () => {
    const out = mergeFeatures("monthly", [pf("sync", "quota", "100", 100, "daily")], [ad("a1", "sync", "quota", "50", 50, "yearly"), ad("a2", "sync", "quota", "5", 5)]);
    expect(out).toEqual([{ name: "sync", valueType: "quota", value: "155", quotaLimit: 155, quotaPeriod: "daily", sources: ["plan", "a1", "a2"] }]);
  });

  test("a quota add-on over a non-quota plan feature replaces it", () => {
    const out = mergeFeatures("hourly", [pf("sync", "bool", "true")], [ad("a1", "sync", "quota", "10", 10)]);
    expect(out).toEqual([{ name: "sync", valueType: "quota", value: "10", quotaLimit: 10, quotaPeriod: "hourly", sources: ["a1"] }]);
  });

  test("an add-on introduces a feature the plan lacks; later add-ons win for non-quota types", () => {
    const out = mergeFeatures("monthly", [], [ad("a1", "tier", "string", "gold"), ad("a2", "tier", "string", "platinum")]);
    expect(out).toEqual([{ name: "tier", valueType: "string", value: "platinum", quotaLimit: null, quotaPeriod: null, sources: ["a2"] }]);
  });
});

describe("addonPatch: an update of the add-on as it is now", () => {
  const at = new Date("2026-11-28T10:00:00.000Z");
  const quota = { id: "a1", productId: "p1", name: "Exports", featureName: "exports", valueType: "quota" as const, value: "100", quotaLimit: 100, quotaPeriod: "monthly" as const, createdAt: at, updatedAt: at };
  const bool = { ...quota, valueType: "bool" as const, value: "true", quotaLimit: null, quotaPeriod: null };

  test("keeps what the update leaves out; a quota's value follows its new limit", () => {
    expect(addonPatch(quota, { name: "More exports" })).toEqual({ name: "More exports", featureName: "exports", valueType: "quota", value: "100", quotaLimit: 100, quotaPeriod: "monthly" });
    expect(addonPatch(quota, { quotaLimit: 250 })).toEqual({ name: "Exports", featureName: "exports", valueType: "quota", value: "250", quotaLimit: 250, quotaPeriod: "monthly" });
    expect(addonPatch(bool, { value: "false" })).toMatchObject({ valueType: "bool", value: "false", quotaLimit: null });
  });

  test("a new value type starts from nothing: its value and quota fields must come with it", () => {
    expect(addonPatch(quota, { valueType: "bool", value: "true" })).toMatchObject({ valueType: "bool", value: "true", quotaLimit: null, quotaPeriod: null });
    expect(() => addonPatch(quota, { valueType: "bool" })).toThrow();
    expect(() => addonPatch(bool, { valueType: "quota" })).toThrow();
    expect(addonPatch(bool, { valueType: "quota", quotaLimit: 5 })).toMatchObject({ valueType: "quota", value: "5", quotaLimit: 5, quotaPeriod: null });
  });
});
