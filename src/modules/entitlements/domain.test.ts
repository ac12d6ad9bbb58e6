import { describe, expect, test } from "bun:test";
import { featureValues, mergeGrants, quotaMeter } from "./domain";
import type { FeatureGrant } from "./repo";

const g = (over: Partial<FeatureGrant> & Pick<FeatureGrant, "name">): FeatureGrant => ({
  source: "plan",
  valueType: "bool",
  value: "true",
  quotaLimit: null,
  quotaPeriod: null,
  ...over,
});

describe("merging plan and add-on features", () => {
  test("add-on features override plan features of the same name", () => {
    const m = mergeGrants(
      [g({ name: "export", value: "false" }), g({ name: "tier", valueType: "string", value: "basic" }), g({ source: "addon", name: "export", value: "true" })],
      "monthly",
    );
    expect(m.get("export")).toMatchObject({ valueType: "bool", value: "true", enabled: true });
    expect(m.get("tier")).toMatchObject({ value: "basic", enabled: true });
  });

  test("quota limits add up and keep the plan feature's period", () => {
    const m = mergeGrants(
      [
        g({ name: "api", valueType: "quota", value: "100", quotaLimit: 100, quotaPeriod: "daily" }),
        g({ source: "addon", name: "api", valueType: "quota", value: "50", quotaLimit: 50, quotaPeriod: "monthly" }),
        g({ source: "addon", name: "api", valueType: "quota", value: "25", quotaLimit: 25 }),
      ],
      "yearly",
    );
    expect(m.get("api")).toEqual({ name: "api", valueType: "quota", value: "175", enabled: true, limit: 175, period: "daily" });
  });

  test("an add-on quota without a plan feature grants its own limit, the plan period by default", () => {
    const m = mergeGrants([g({ source: "addon", name: "seats-x", valueType: "quota", value: "", quotaLimit: 10 })], "monthly");
    expect(m.get("seats-x")).toMatchObject({ limit: 10, value: "10", period: "monthly", enabled: true });
  });

  test("unlimited plus a limit stays unlimited", () => {
    const m = mergeGrants(
      [g({ name: "api", valueType: "quota", value: "", quotaLimit: null }), g({ source: "addon", name: "api", valueType: "quota", value: "", quotaLimit: 5 })],
      "monthly",
    );
    expect(m.get("api")).toMatchObject({ limit: null, value: "unlimited", enabled: true });
  });

  test("an add-on of another type replaces a quota outright", () => {
    const m = mergeGrants([g({ name: "api", valueType: "quota", quotaLimit: 5 }), g({ source: "addon", name: "api", valueType: "bool", value: "true" })], "monthly");
    expect(m.get("api")).toMatchObject({ valueType: "bool", limit: null, enabled: true });
  });

  test("enabled per value type", () => {
    const m = mergeGrants(
      [
        g({ name: "b0", valueType: "bool", value: "false" }),
        g({ name: "f1", valueType: "flag", value: "on" }),
        g({ name: "f2", valueType: "flag", value: "variant-b" }),
        g({ name: "i0", valueType: "int", value: "0" }),
        g({ name: "i5", valueType: "int", value: "5" }),
        g({ name: "s", valueType: "string", value: "" }),
        g({ name: "q0", valueType: "quota", quotaLimit: 0 }),
      ],
      "monthly",
    );
    expect(Object.fromEntries([...m].map(([k, v]) => [k, v.enabled]))).toEqual({ b0: false, f1: true, f2: true, i0: false, i5: true, s: false, q0: false });
  });
});

describe("feature values for verify and tokens", () => {
  test("booleans stay booleans, everything else is a string, keys sorted", () => {
    const m = mergeGrants(
      [
        g({ name: "z", valueType: "int", value: "3" }),
        g({ name: "a", valueType: "bool", value: "true" }),
        g({ name: "m", valueType: "flag", value: "early-access" }),
        g({ name: "q", valueType: "quota", quotaLimit: 7 }),
      ],
      "monthly",
    );
    const v = featureValues(m);
    expect(v).toEqual({ a: true, m: true, q: "7", z: "3" });
    expect(Object.keys(v)).toEqual(["a", "m", "q", "z"]);
  });
});

describe("the Stripe meter of a quota", () => {
  const api = g({ name: "api", valueType: "quota", quotaLimit: 10, stripeMeter: "api_calls" });
  test("the plan quota's meter; add-on units keep it", () => {
    expect(quotaMeter([api], "api")).toBe("api_calls");
    expect(quotaMeter([api, g({ source: "addon", name: "api", valueType: "quota", quotaLimit: 5 })], "api")).toBe("api_calls");
  });
  test("none for an unmetered quota, an add-on-only quota, a feature replaced by another type, or an unknown name", () => {
    expect(quotaMeter([g({ name: "api", valueType: "quota", quotaLimit: 10 })], "api")).toBeNull();
    expect(quotaMeter([g({ source: "addon", name: "api", valueType: "quota", quotaLimit: 5 })], "api")).toBeNull();
    expect(quotaMeter([api, g({ source: "addon", name: "api", valueType: "bool" })], "api")).toBeNull();
    expect(quotaMeter([api], "other")).toBeNull();
  });
});

